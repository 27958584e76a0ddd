'use strict';

// A rascal consumer whose handler always fails, so that rascal writes its
// error messages into RabbitMQ the way it really does, and, in receive
// mode, a rascal consumer that takes what warren replays. warren's
// integration tests (sources/dlq/frameworks_broker_test.go,
// ops/conventions_replay_test.go) run it against a vhost of their own,
// whose queues they have declared, and then read what rascal wrote.
//
//   node fail.js AMQP_URL VHOST MODE [N]
//
// AMQP_URL is the broker without a vhost (amqp://guest:guest@host:5672/).
// It publishes N (default 5) messages to the queue "orders", each with a
// message ID ord-<order> and the body {"orderId": <order>} for orders
// 1001, 1002, …; the handler fails every delivery with an Error "Order
// <order> not found" whose code is ENOTFOUND, and recovers by MODE:
//
//   forward        forward to the publication to_error (queue orders_error)
//   retry-forward  republish twice, then forward to orders_error
//   republish      republish twice, then nack: the broker dead-letters the
//                  message through orders' dead-letter exchange
//   immediate      republish with immediateNack: the republished copy is
//                  nacked on arrival, and the broker dead-letters it
//
// It exits 0 once the final queue (orders_error, or DLQ, default
// orders.dlq, for the two nack modes) holds N messages and orders is
// empty, after printing one JSON line: the library versions and, per
// message ID, how many times the handler ran. It exits 1 on any error and
// after TIMEOUT_MS (default 25000) at the latest.
//
// One more mode publishes nothing and fails nothing:
//
//   receive        subscribe to orders with rascal and ack every message;
//                  print one JSON line {"received": {id, contentType, body,
//                  headers}} per delivery, with the body as text and the
//                  headers as the handler saw them. Once N have arrived it
//                  waits LINGER_MS (default 500) more, so that a copy too
//                  many shows too, then prints the summary line: per
//                  message ID, how many times it arrived.

const amqplib = require('amqplib');
const rascal = require('rascal');

const [url, vhost, mode, n = '5'] = process.argv.slice(2);
const count = Number(n);
const receiving = mode === 'receive';
const finalQueue = mode === 'forward' || mode === 'retry-forward' ? 'orders_error' : process.env.DLQ || 'orders.dlq';
const lingerMs = Number(process.env.LINGER_MS || 500);
const timeoutMs = Number(process.env.TIMEOUT_MS || 25000);

const recoveries = {
  forward: [{ strategy: 'forward', publication: 'to_error' }],
  'retry-forward': [
    { strategy: 'republish', attempts: 2 },
    { strategy: 'forward', publication: 'to_error' },
  ],
  republish: [{ strategy: 'republish', attempts: 2 }, { strategy: 'nack' }],
  immediate: [{ strategy: 'republish', immediateNack: true }],
};

function fail(err) {
  console.error(`rascal ${mode}: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
}

if (!url || !vhost || !(recoveries[mode] || receiving) || !(count > 0)) {
  fail(`usage: node fail.js AMQP_URL VHOST ${Object.keys(recoveries).join('|')}|receive [N]`);
}

const timer = setTimeout(() => fail(`not done after ${timeoutMs} ms`), timeoutMs);

function vhostURL() {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(vhost)}`;
  return u.toString();
}

// The queues exist already, declared by the test with the arguments it
// wants (orders dead-letters to the DLQ in the nack modes): rascal only
// checks them (assert false, check true), so it never declares a queue
// with arguments of its own.
const existing = { assert: false, check: true };

const definitions = {
  vhosts: {
    [vhost]: {
      connection: { url: vhostURL(), retry: { min: 100, max: 1000, strategy: 'linear' } },
      queues: { orders: existing, [finalQueue]: existing },
      publications: {
        to_orders: { queue: 'orders' },
        to_error: { queue: 'orders_error' },
      },
      subscriptions: {
        orders: { queue: 'orders', prefetch: 5 },
      },
    },
  },
};
if (receiving) {
  // Only orders is read: nothing is published, nothing forwarded.
  definitions.vhosts[vhost].queues = { orders: existing };
  definitions.vhosts[vhost].publications = {};
} else if (finalQueue !== 'orders_error') {
  // No forward in these modes: no queue orders_error to check.
  delete definitions.vhosts[vhost].publications.to_error;
}

async function depth(ch, queue) {
  return (await ch.checkQueue(queue)).messageCount;
}

// headersJSON is the headers as JSON: an int64 amqplib may read as a
// BigInt becomes its decimal text, a Buffer its text.
function headersJSON(headers) {
  return JSON.parse(JSON.stringify(headers || {}, (key, value) => {
    if (typeof value === 'bigint') return value.toString();
    if (value && value.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data).toString();
    return value;
  }));
}

// receive acks what arrives in orders and prints it, until N have come
// and LINGER_MS has passed since.
async function receive() {
  const broker = await rascal.BrokerAsPromised.create(rascal.withDefaultConfig(definitions));
  broker.on('error', fail);

  const arrived = {};
  let total = 0;
  let enough;
  const done = new Promise((resolve) => { enough = resolve; });
  const subscription = await broker.subscribe('orders');
  subscription.on('error', fail);
  subscription.on('invalid_content', (err, message, ackOrNack) => {
    // Printed like any other arrival: the test judges the body.
    report(message);
    ackOrNack();
  });
  function report(message) {
    const id = message.properties.messageId;
    arrived[id] = (arrived[id] || 0) + 1;
    total++;
    console.log(JSON.stringify({
      received: {
        id,
        contentType: message.properties.contentType,
        body: message.content.toString(),
        headers: headersJSON(message.properties.headers),
      },
    }));
    if (total === count) enough();
  }
  subscription.on('message', (message, content, ackOrNack) => {
    report(message);
    ackOrNack();
  });

  await done;
  await new Promise((resolve) => setTimeout(resolve, lingerMs));
  await subscription.cancel();
  await broker.shutdown();
  clearTimeout(timer);
  console.log(JSON.stringify({
    rascal: require('rascal/package.json').version,
    amqplib: require('amqplib/package.json').version,
    runs: arrived,
  }));
}

async function main() {
  const broker = await rascal.BrokerAsPromised.create(rascal.withDefaultConfig(definitions));
  broker.on('error', fail);

  const runs = {};
  const subscription = await broker.subscribe('orders');
  subscription.on('error', fail);
  subscription.on('message', (message, content, ackOrNack) => {
    const id = message.properties.messageId;
    runs[id] = (runs[id] || 0) + 1;
    const err = new Error(`Order ${content.orderId} not found`);
    err.code = 'ENOTFOUND';
    ackOrNack(err, recoveries[mode]);
  });

  for (let i = 0; i < count; i++) {
    const orderId = 1001 + i;
    const publication = await broker.publish('to_orders', { orderId }, { options: { messageId: `ord-${orderId}` } });
    await new Promise((resolve, reject) => {
      publication.on('success', resolve).on('error', reject).on('return', () => reject(new Error(`ord-${orderId} returned`)));
    });
  }

  // Done when every message is in its final queue and none is left in
  // orders, read on a connection of our own.
  const conn = await amqplib.connect(vhostURL());
  const ch = await conn.createChannel();
  for (;;) {
    if ((await depth(ch, finalQueue)) === count && (await depth(ch, 'orders')) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await conn.close();
  await subscription.cancel();
  await broker.shutdown();
  clearTimeout(timer);
  console.log(JSON.stringify({
    rascal: require('rascal/package.json').version,
    amqplib: require('amqplib/package.json').version,
    runs,
  }));
}

(receiving ? receive() : main()).catch(fail);
