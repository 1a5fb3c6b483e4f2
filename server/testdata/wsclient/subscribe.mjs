// Subscribes to papergraph with the graphql-ws client over the ws package
// and prints each result as a JSON line, until it has printed as many as
// asked; then it closes the connection and exits. An error, or a minute
// without the results, exits with a failure.
//
//   node subscribe.mjs ws://host/graphql 'subscription { ... }' COUNT
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url, query, count] = process.argv.slice(2);
const want = Number(count);
const deadline = setTimeout(() => {
  console.error(`subscribe.mjs: fewer than ${want} results within a minute`);
  process.exit(2);
}, 60_000);

const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
let got = 0;
client.subscribe({ query }, {
  next(result) {
    console.log(JSON.stringify(result));
    if (++got === want) {
      clearTimeout(deadline);
      client.dispose();
    }
  },
  error(err) {
    console.error('subscribe.mjs:', err instanceof Error ? err.message : JSON.stringify(err));
    process.exit(1);
  },
  complete() {},
});
