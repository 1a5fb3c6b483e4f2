// PostGraphile 5's configuration for papergraph-bench peer: the Amber
// preset as its documentation recommends for production, with what the
// harness asks of PostGraphile 4 on its command line: no mutations, no
// GraphiQL (nor on a GET of the endpoint), plain lists beside connections,
// set-returning functions that hold no nulls, and no explain. The
// connection, schema, host and port come from the command line.
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  disablePlugins: ["PgMutationCreatePlugin", "PgMutationUpdateDeletePlugin"],
  plugins: [
    {
      name: "PapergraphBenchListsPlugin",
      version: "0.0.0",
      schema: {
        globalBehavior(behavior) {
          return [behavior, "connection", "resource:connection", "list", "resource:list"];
        },
      },
    },
  ],
  schema: { pgForbidSetofFunctionsToReturnNull: true },
  grafserv: { graphiql: false, graphiqlOnGraphQLGET: false, watch: false },
  grafast: { explain: false },
};

export default preset;
