// Runs graphql-http's server audits against a GraphQL endpoint and prints
// every result. Exits 1 when a MUST or SHOULD audit fails.
import { serverAudits } from 'graphql-http';

const url = process.argv[2] ?? 'http://localhost:18080/graphql';
let failed = 0;
for (const audit of serverAudits({ url })) {
  const result = await audit.fn();
  const level = audit.name.split(' ')[0];
  const ok = result.status === 'ok';
  console.log(`${ok ? 'ok  ' : result.status.padEnd(4)} ${audit.id} ${audit.name}`);
  if (!ok) {
    console.log(`       ${result.reason}`);
    if (level !== 'MAY') failed++;
  }
}
console.log(`${failed} MUST/SHOULD audits failed`);
process.exit(failed ? 1 : 0);
