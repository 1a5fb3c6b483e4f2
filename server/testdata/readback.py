"""Reads papergraph's exports back with the libraries analysts use.

Usage: python3 readback.py DIR FILE... ; prints one JSON object, by file
name, of what each file holds as NetworkX or pandas reads it (see
server/export_python_test.go, which runs it and checks the figures).
"""
import json
import os
import sys

import networkx
import pandas


def graph(g):
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "directed": g.is_directed(),
        "nodeAttrs": sorted({k for _, d in g.nodes(data=True) for k in d}),
        "edgeAttrs": sorted({k for _, _, d in g.edges(data=True) for k in d}),
    }


def table(df):
    return {"rows": len(df), "columns": list(df.columns)}


def read(path):
    if path.endswith(".graphml"):
        return graph(networkx.read_graphml(path))
    if path.endswith(".gexf"):
        return graph(networkx.read_gexf(path))
    if path.endswith(".csv"):
        # A search export ends with a comment line that says it is whole.
        return table(pandas.read_csv(path, comment="#"))
    if path.endswith(".jsonl"):
        # The last line says whether the file is whole, and is not a paper.
        df = pandas.read_json(path, lines=True, dtype=False)
        end = df.iloc[-1]
        return dict(table(df.iloc[:-1].drop(columns=["complete", "error"], errors="ignore")),
                    complete=int(end["complete"]["rows"]) if "complete" in df.columns else None)
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            elements = json.load(f)["elements"]
        return {
            "nodes": len(elements["nodes"]),
            "edges": len(elements["edges"]),
            "nodeAttrs": sorted({k for n in elements["nodes"] for k in n["data"]}),
            "edgeAttrs": sorted({k for e in elements["edges"] for k in e["data"]}),
        }
    raise SystemExit("unknown export: " + path)


def main():
    directory, names = sys.argv[1], sys.argv[2:]
    json.dump({n: read(os.path.join(directory, n)) for n in names}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
