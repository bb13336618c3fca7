/** The start-up floor: a bare Bun.serve answering /health, started the same way as the server. */
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ status: 'ok' }) });
console.log(`listening on http://127.0.0.1:${server.port}`);
process.once('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
