// Renders the benchmarks' JSON files as SVG charts (vega-lite, headless).
// Usage: node render.mjs [--remote remote.json] [--transport transport.json] [--open-loop open-loop.json]
//        [--many-peers many-peers.json] [--soak SOAK_DIR] [--out ../../docs/charts]
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

const { values: args } = parseArgs({
  options: {
    remote: { type: 'string' },
    transport: { type: 'string' },
    soak: { type: 'string' },
    'open-loop': { type: 'string' },
    'many-peers': { type: 'string' },
    out: { type: 'string', default: '../../docs/charts' },
  },
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

// One point per series and x value: the median of the repeated runs.
const medians = (rows, series, x, y) => {
  const groups = new Map();
  for (const row of rows) {
    const key = `${row[series]}\u0000${row[x]}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups.values()].map((group) => ({ [series]: group[0][series], [x]: group[0][x], [y]: median(group.map((r) => r[y])) }));
};

const lineChart = (title, values, series, x, xTitle) => ({
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title,
  width: 520,
  height: 300,
  data: { values },
  mark: { type: 'line', point: true },
  encoding: {
    x: { field: x, type: 'quantitative', title: xTitle },
    y: { field: 'MsgsPerSec', type: 'quantitative', title: 'msgs/sec' },
    color: { field: series, type: 'nominal', title: null },
  },
});

const latencyChart = (title, values, series) => ({
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title,
  width: 520,
  height: 300,
  data: { values },
  mark: 'bar',
  encoding: {
    x: { field: 'percentile', type: 'nominal', title: null, sort: ['p50', 'p90', 'p99'] },
    xOffset: { field: series },
    y: { field: 'us', type: 'quantitative', title: 'round trip [µs]' },
    color: { field: series, type: 'nominal', title: null },
  },
});

const render = async (spec, file) => {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  writeFileSync(file, await view.toSVG());
  console.log(`wrote ${file}`);
};

mkdirSync(args.out, { recursive: true });
if (args.remote) {
  const remote = JSON.parse(readFileSync(args.remote, 'utf8'));
  await render(
    lineChart({ text: 'RemotePingPong: msgs/sec by client count', subtitle: remote.Machine }, medians(remote.Rows, 'Transport', 'Clients', 'MsgsPerSec'), 'Transport', 'Clients', 'clients'),
    join(args.out, 'remote-throughput.svg'));
  if (remote.Latency.length > 0) {
    // One bar per transport and percentile: the median over the repeated runs.
    const runs = remote.Latency.flatMap((l) => [['p50', l.P50Us], ['p90', l.P90Us], ['p99', l.P99Us]].map(([percentile, us]) => ({ Transport: l.Transport, percentile, us })));
    const points = medians(runs, 'Transport', 'percentile', 'us');
    await render(latencyChart({ text: 'RemotePingPong: round trip at one message in flight', subtitle: remote.Machine }, points, 'Transport'), join(args.out, 'remote-latency.svg'));
  }
}

if (args.transport) {
  const rows = JSON.parse(readFileSync(args.transport, 'utf8')).map((r) => ({ ...r, Batching: `batching ${r.Batching}` }));
  await render(lineChart('TransportPingPong: msgs/sec by connection pairs', medians(rows, 'Batching', 'Pairs', 'MsgsPerSec'), 'Batching', 'Pairs', 'pairs'), join(args.out, 'transport-throughput.svg'));
  const points = medians(rows, 'Batching', 'Pairs', 'RoundTripP50Us').map((r) => ({ ...r, MsgsPerSec: r.RoundTripP50Us }));
  await render(
    { ...lineChart('TransportPingPong: median round trip by connection pairs (50 in flight)', points, 'Batching', 'Pairs', 'pairs'),
      encoding: { x: { field: 'Pairs', type: 'quantitative', title: 'pairs' }, y: { field: 'MsgsPerSec', type: 'quantitative', title: 'round trip p50 [µs]', scale: { type: 'log' } }, color: { field: 'Batching', type: 'nominal', title: null } } },
    join(args.out, 'transport-latency.svg'));
}

if (args['open-loop']) {
  // Latency against offered load: p50 and p99 per transport and rate, medians over the runs, on a log scale (a
  // saturated transport's latency is seconds).
  const openLoop = JSON.parse(readFileSync(args['open-loop'], 'utf8'));
  const runs = openLoop.OpenLoop.flatMap((r) => [['p50', r.P50Us], ['p99', r.P99Us]].map(([percentile, us]) =>
    ({ series: `${r.Transport}\u0000${percentile}`, Transport: r.Transport, percentile, OfferedPerSec: r.OfferedPerSec, ms: us / 1000 })));
  const points = medians(runs, 'series', 'OfferedPerSec', 'ms').map((p) => {
    const [Transport, percentile] = p.series.split('\u0000');
    return { Transport, percentile, OfferedPerSec: p.OfferedPerSec, ms: p.ms };
  });
  await render({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `Latency against offered load (open loop), ${openLoop.Payload}-byte payload`, subtitle: openLoop.Machine },
    width: 520,
    height: 300,
    data: { values: points },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'OfferedPerSec', type: 'quantitative', title: 'offered round trips/s' },
      y: { field: 'ms', type: 'quantitative', title: 'latency from due time [ms]', scale: { type: 'log' } },
      color: { field: 'Transport', type: 'nominal', title: null },
      strokeDash: { field: 'percentile', type: 'nominal', title: null },
    },
  }, join(args.out, 'open-loop-latency.svg'));
}

if (args['many-peers']) {
  // What the hub holds as peers are added, and its round trips to them: one panel each, medians over the runs.
  const manyPeers = JSON.parse(readFileSync(args['many-peers'], 'utf8'));
  const quantities = [
    ['hub working set [MB]', (r) => r.WorkingSetMb],
    ['hub live heap [MB]', (r) => r.LiveHeapMb],
    ['round trip p99 [ms]', (r) => r.RttP99Us / 1000],
  ];
  const runs = manyPeers.ManyPeers.flatMap((r) => quantities.map(([quantity, read]) =>
    ({ series: `${r.Transport}\u0000${quantity}`, Peers: r.Peers, value: read(r) })));
  const values = medians(runs, 'series', 'Peers', 'value').map((p) => {
    const [Transport, quantity] = p.series.split('\u0000');
    return { Transport, quantity, Peers: p.Peers, value: p.value };
  });
  await render({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Many peers: one hub node, each peer pinged once a second', subtitle: manyPeers.Machine },
    data: { values },
    facet: { row: { field: 'quantity', type: 'nominal', title: null, sort: quantities.map(([q]) => q) } },
    spec: {
      width: 520,
      height: 130,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'Peers', type: 'quantitative', title: 'peer ActorSystems' },
        y: { field: 'value', type: 'quantitative', title: null, scale: { zero: true } },
        color: { field: 'Transport', type: 'nominal', title: null },
      },
    },
    resolve: { scale: { y: 'independent' } },
  }, join(args.out, 'many-peers.svg'));
}

if (args.soak) {
  // One chart per stack: what each process holds, minute by minute, with and without TLS, one panel per quantity.
  const reports = readdirSync(args.soak).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(args.soak, f), 'utf8')));
  const quantities = [
    ['working set [MB]', (p) => p.WorkingSetMb],
    ['live heap outside DotNetty\'s pool [MB]', (p) => p.LiveHeapMb - p.DotNettyPoolMb],
    ['open file descriptors', (p) => p.OpenFiles],
    ['threads', (p) => p.Threads],
  ];
  for (const transport of [...new Set(reports.map((r) => r.Transport))]) {
    const values = reports.filter((r) => r.Transport === transport).flatMap((r) => r.Samples.flatMap((s) =>
      [['client', s.Client], ['server', s.Server]].flatMap(([side, process]) => quantities.map(([quantity, read]) =>
        ({ Minute: s.Minute, quantity, process: `${side}${r.Tls ? ', TLS' : ''}`, value: read(process) })))));
    const minutes = Math.round(reports.find((r) => r.Transport === transport).Minutes);
    await render({
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: `Soak: ${transport}, ${minutes} minutes, connections re-made every few minutes`, subtitle: reports[0].Machine },
      data: { values },
      facet: { row: { field: 'quantity', type: 'nominal', title: null, sort: quantities.map(([q]) => q) } },
      spec: {
        width: 520,
        height: 110,
        mark: 'line',
        encoding: {
          x: { field: 'Minute', type: 'quantitative', title: 'minutes' },
          y: { field: 'value', type: 'quantitative', title: null, scale: { zero: true } },
          color: { field: 'process', type: 'nominal', title: null },
        },
      },
      resolve: { scale: { y: 'independent' } },
    }, join(args.out, `soak-${transport}.svg`));
  }
}
