// The GraphiQL page of papergraph. The server renders #graphiql with the
// endpoint and the starting query as data attributes, so that the page runs
// no inline script and the Content-Security-Policy can allow scripts from
// 'self' alone.
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import 'graphiql/style.css';
import '@graphiql/plugin-explorer/style.css';
import './page.css';

const root = document.getElementById('graphiql');
const endpoint = root.dataset.endpoint;

// The URL follows the editors, so that a query can be shared as a link.
const params = new URLSearchParams(location.search);
function follow(name) {
  return (value) => {
    if (value) params.set(name, value);
    else params.delete(name);
    history.replaceState(null, '', '?' + params.toString());
  };
}

// fetcher asks for GraphQL over HTTP's media type; refusals then come back
// as 4xx with a GraphQL answer in the body, which GraphiQL shows as is.
async function fetcher(request, options) {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      Accept: 'application/graphql-response+json, application/json',
      'Content-Type': 'application/json',
      ...options?.headers,
    },
    body: JSON.stringify(request),
  });
  return response.json();
}

createRoot(root).render(
  <GraphiQL
    fetcher={fetcher}
    query={params.get('query') ?? root.dataset.query}
    variables={params.get('variables') ?? undefined}
    headers={params.get('headers') ?? undefined}
    onEditQuery={follow('query')}
    onEditVariables={follow('variables')}
    onEditHeaders={follow('headers')}
    plugins={[explorerPlugin()]}
    inputValueDeprecation
  />,
);
