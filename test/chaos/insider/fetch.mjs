#!/usr/bin/env node
// A proxy-aware HTTP GET, as a CLI's command makes one (curl, pip, npm honour HTTP_PROXY): through
// $HTTP_PROXY when set (absolute-form request), else direct. One JSON line per URL:
// {url, status, body} or {url, error}. Used by the network policy tests from inside the jail.
//   node fetch.mjs URL...
import { request } from 'node:http';

const proxy = process.env.HTTP_PROXY ?? process.env.http_proxy;

function get(url) {
  return new Promise((resolve) => {
    const target = new URL(url);
    const via = proxy ? new URL(proxy) : undefined;
    const req = request({
      host: via ? via.hostname : target.hostname,
      port: via ? via.port : target.port,
      path: via ? target.href : `${target.pathname}${target.search}`,
      headers: { host: target.host },
      timeout: 10_000,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d));
      res.on('end', () => resolve({ url, status: res.statusCode, body: body.slice(0, 200) }));
    });
    req.on('timeout', () => (req.destroy(), resolve({ url, error: 'timeout' })));
    req.on('error', (error) => resolve({ url, error: error.code ?? error.message }));
    req.end();
  });
}

for (const url of process.argv.slice(2)) process.stdout.write(`${JSON.stringify(await get(url))}\n`);
