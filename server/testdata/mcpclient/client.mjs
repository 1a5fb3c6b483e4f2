// Connects to papergraph's /mcp with the MCP TypeScript SDK's Streamable
// HTTP client, lists the tools and calls each with the arguments given,
// then reads a resource; prints one JSON line per step. Exits with a
// failure on any error, or after a minute.
//
//   node client.mjs http://host/mcp API_KEY '{"tool": {args}, ...}' RESOURCE_URI
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, key, calls, resource] = process.argv.slice(2);
const deadline = setTimeout(() => {
  console.error('client.mjs: no answer within a minute');
  process.exit(2);
}, 60_000);

try {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'papergraph-node-test', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  console.log(JSON.stringify({ step: 'tools', names: tools.map((t) => t.name).sort() }));
  for (const [name, args] of Object.entries(JSON.parse(calls))) {
    const result = await client.callTool({ name, arguments: args });
    console.log(JSON.stringify({ step: 'call', name, isError: !!result.isError, text: result.content[0].text }));
  }
  const read = await client.readResource({ uri: resource });
  console.log(JSON.stringify({ step: 'resource', uri: read.contents[0].uri, text: read.contents[0].text }));
  await client.close();
  clearTimeout(deadline);
} catch (err) {
  console.error('client.mjs:', err instanceof Error ? err.message : JSON.stringify(err));
  process.exit(1);
}
