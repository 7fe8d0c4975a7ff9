// The client scenario with node-postgres (pg) and pg-copy-streams.
//
// Connection settings come from the libpq-style environment (PGHOST,
// PGPORT, PGUSER, PGDATABASE). SCENARIO_PREFIX names this run's objects;
// SCENARIO_TARGET=postgres runs the scenario against PostgreSQL itself,
// with a plain view instead of a materialized one and without SUBSCRIBE,
// which checks the scenario's own expectations. Exits non-zero on the
// first failed assertion.
'use strict';
const assert = require('node:assert/strict');
const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');
const { Client } = require('pg');
const { from: copyFrom, to: copyTo } = require('pg-copy-streams');

const P = process.env.SCENARIO_PREFIX;
const ROCKSTREAM = (process.env.SCENARIO_TARGET || 'rockstream') === 'rockstream';

async function main() {
  const c = new Client();
  await c.connect();

  await c.query(`CREATE TABLE ${P}_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2))`);
  const view = ROCKSTREAM ? 'MATERIALIZED VIEW' : 'VIEW';
  await c.query(`CREATE ${view} ${P}_totals AS SELECT customer, sum(amount) AS total, count(*) AS n ` +
    `FROM ${P}_orders GROUP BY customer`);

  // Parameterized DML through a named prepared statement.
  for (const values of [[1, 'alice', '10.50'], [2, 'bob', '3.25'], [3, 'alice', '1.00']]) {
    await c.query({ name: 'ins', text: `INSERT INTO ${P}_orders VALUES ($1, $2, $3)`, values });
  }

  // A committed transaction and a rolled-back one.
  await c.query('BEGIN');
  await c.query(`INSERT INTO ${P}_orders VALUES ($1, $2, $3)`, [4, 'carol', '7']);
  await c.query(`UPDATE ${P}_orders SET amount = amount + 1 WHERE id = $1`, [2]);
  await c.query('COMMIT');
  await c.query('BEGIN');
  await c.query(`INSERT INTO ${P}_orders VALUES ($1, $2, $3)`, [5, 'dave', '100']);
  await c.query('ROLLBACK');

  // Read the view.
  const r = await c.query(`SELECT customer, total, n FROM ${P}_totals ORDER BY customer`);
  assert.deepEqual(r.fields.map((f) => f.name), ['customer', 'total', 'n']);
  assert.deepEqual(r.rows, [
    { customer: 'alice', total: '11.50', n: '2' },
    { customer: 'bob', total: '4.25', n: '1' },
    { customer: 'carol', total: '7.00', n: '1' },
  ]);

  // COPY in and out.
  await pipeline(Readable.from(['6\terin\t2.50\n', '7\talice\t0.50\n']),
    c.query(copyFrom(`COPY ${P}_orders FROM STDIN`)));
  let out = '';
  await pipeline(c.query(copyTo(`COPY (SELECT customer, total, n FROM ${P}_totals ORDER BY customer) TO STDOUT WITH (FORMAT csv)`)),
    new Writable({ write(chunk, _enc, done) { out += chunk.toString(); done(); } }));
  assert.equal(out, 'alice,12.00,3\nbob,4.25,1\ncarol,7.00,1\nerin,2.50,1\n');

  // SUBSCRIBE through a cursor sees a change committed by another connection.
  if (ROCKSTREAM) {
    const sub = new Client();
    await sub.connect();
    await sub.query('BEGIN');
    await sub.query(`DECLARE c CURSOR FOR SUBSCRIBE ${P}_totals WITH (SNAPSHOT = false)`);
    await c.query(`INSERT INTO ${P}_orders VALUES ($1, $2, $3)`, [8, 'bob', '1.00']);
    const f = await sub.query("FETCH ALL c WITH (timeout = '10s')");
    const changes = f.rows.map((row) => [row.diff, row.customer, row.total, row.n]).sort();
    assert.deepEqual(changes, [['-1', 'bob', '4.25', '1'], ['1', 'bob', '5.25', '2']]);
    await sub.query('ROLLBACK');
    await sub.end();
  } else {
    await c.query(`INSERT INTO ${P}_orders VALUES ($1, $2, $3)`, [8, 'bob', '1.00']);
  }

  // An error leaves the session usable.
  await assert.rejects(c.query('SELECT 1/0'), (e) => e.code === '22012');
  const n = await c.query(`SELECT count(*) AS n FROM ${P}_orders`);
  assert.equal(n.rows[0].n, '7');
  await c.end();
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
