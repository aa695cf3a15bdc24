// Strict checks of the attention viewer's data files, with Node (tests/viewer/CMakeLists.txt).
//
//   node check_json.js FOLDER...   every attention.json under each FOLDER must parse with
//                                  JSON.parse, which is strict (no NaN, Infinity, trailing
//                                  comma, comment or single quote); have schema
//                                  "attend-attention/1", a run and examples; and hold maps of
//                                  finite numbers in equal rows that match their "rows" and
//                                  "cols". The attention_data.js beside it, run as a script,
//                                  must register the same document; every attend_runs.js must
//                                  list the runs as strings. At least one attention.json.
//   node check_json.js --self-test the checks refuse NaN, Infinity, a trailing comma, a
//                                  ragged map and a script that registers other data.
//
// A run titled "hostile strings and numbers" (make_viewer_data's strict/hostile) must also
// hold exactly the strings and numbers that make_viewer_data gave it. Exit 0: all passed;
// 1: the first problem, naming the file.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const assert = require('assert');

const kSchema = 'attend-attention/1';

function fail(file, what) {
  throw new Error(`${file}: ${what}`);
}

function isFiniteNumber(v) {
  return typeof v === 'number' && Number.isFinite(v);
}

// The document's shape, as nn/viz/attention_json.cpp writes it and the page reads it.
function checkDocument(doc, file) {
  if (doc === null || typeof doc !== 'object') fail(file, 'not a JSON object');
  if (doc.schema !== kSchema) fail(file, `schema is ${JSON.stringify(doc.schema)}, not "${kSchema}"`);
  const run = doc.run;
  if (!run || typeof run.lesson !== 'string' || typeof run.title !== 'string' ||
      typeof run.flags !== 'string' || !isFiniteNumber(run.seed))
    fail(file, 'run must have a lesson, title and flags (strings) and a seed (a number)');
  if (run.kind !== 'sequence' && run.kind !== 'image')
    fail(file, `run.kind is ${JSON.stringify(run.kind)}, not "sequence" or "image"`);
  if (!Array.isArray(doc.examples)) fail(file, 'examples is not a list');
  doc.examples.forEach((e, i) => {
    const where = `example ${i}`;
    if (typeof e.name !== 'string') fail(file, `${where}: name is not a string`);
    for (const key of ['source', 'target'])
      if (!Array.isArray(e[key]) || !e[key].every((t) => typeof t === 'string'))
        fail(file, `${where}: ${key} is not a list of strings`);
    if (!Array.isArray(e.maps)) fail(file, `${where}: maps is not a list`);
    e.maps.forEach((m, k) => {
      const at = `${where} map ${k}`;
      if (!Array.isArray(m.values) || m.values.length === 0 || m.values.length !== m.rows)
        fail(file, `${at}: values must be ${m.rows} rows`);
      m.values.forEach((row, r) => {
        if (!Array.isArray(row) || row.length !== m.cols)
          fail(file, `${at}: row ${r} has ${row && row.length} values, cols is ${m.cols}`);
        row.forEach((v, c) => {
          if (!isFiniteNumber(v)) fail(file, `${at} [${r}, ${c}] is ${v}, not a finite number`);
        });
      });
      for (const [name, v] of Object.entries(m.scores || {}))
        if (!isFiniteNumber(v)) fail(file, `${at}: score "${name}" is ${v}, not a finite number`);
    });
    for (const b of e.boxes || [])
      for (const key of ['x0', 'y0', 'x1', 'y1'])
        if (!isFiniteNumber(b[key])) fail(file, `${where}: a box's ${key} is ${b[key]}`);
  });
}

// The strings and numbers of make_viewer_data's hostile run, written again here.
function checkHostile(doc, file) {
  let every = '';
  for (let c = 0; c < 128; ++c) every += String.fromCharCode(c);
  const name = every + '\u00e9\u2028\u2029\u{1F600}</script>';
  const e = doc.examples[0];
  assert.strictEqual(e.name, name, `${file}: the example's name did not survive`);
  assert.deepStrictEqual(e.source, ['"', '\\', '\n', '\u2028'], `${file}: the tokens`);
  const row = e.maps[0].values[0];
  assert.strictEqual(row[0], 1e39, `${file}: a weight too large for float32`);
  assert.strictEqual(row[1], 1e-45, `${file}: float32's smallest weight`);
  assert.ok(Object.is(row[2], -0), `${file}: -0 must stay -0, got ${row[2]}`);
  assert.strictEqual(row[3], 0.1, `${file}: 0.1 at float32 precision is written 0.1`);
  assert.deepStrictEqual(e.maps[0].scores, {tiny: 5e-324, huge: 1.7976931348623157e308,
                                            'a "quoted"\nname': -1e-300},
                         `${file}: the scores`);
  assert.strictEqual(doc.run.seed, 18446744073709551615, `${file}: the seed`);
}

// Runs a script of the viewer with a stand-in for the page's attendViewer; returns its calls.
function runScript(file) {
  const calls = {registered: [], runs: []};
  const context = {
    attendViewer: {
      register: (name, doc) => calls.registered.push({name, doc}),
      runs: (names) => calls.runs.push(names),
    },
  };
  try {
    vm.runInNewContext(fs.readFileSync(file, 'utf8'), context, {filename: file, timeout: 5000});
  } catch (error) {
    fail(file, `is not a valid script: ${error.message}`);
  }
  return calls;
}

function checkRunFolder(folder) {
  const jsonFile = path.join(folder, 'attention.json');
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
  } catch (error) {
    fail(jsonFile, `is not strict JSON: ${error.message}`);
  }
  checkDocument(doc, jsonFile);
  if (doc.run.title === 'hostile strings and numbers') checkHostile(doc, jsonFile);
  const script = path.join(folder, 'attention_data.js');
  const calls = runScript(script);
  if (calls.registered.length !== 1) fail(script, `registers ${calls.registered.length} runs, not 1`);
  // The script's objects come from another context (other prototypes): compare as text.
  if (JSON.stringify(calls.registered[0].doc) !== JSON.stringify(doc))
    fail(script, 'registers other data than attention.json beside it');
}

function checkIndex(file) {
  const calls = runScript(file);
  if (calls.runs.length !== 1 || !Array.isArray(calls.runs[0]) ||
      !calls.runs[0].every((name) => typeof name === 'string'))
    fail(file, 'must call attendViewer.runs once with a list of strings');
}

function walk(folder, found) {
  for (const entry of fs.readdirSync(folder, {withFileTypes: true})) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) walk(full, found);
    else if (entry.name === 'attention.json') found.runs.push(folder);
    else if (entry.name === 'attend_runs.js') found.indexes.push(full);
  }
}

function check(folders) {
  const found = {runs: [], indexes: []};
  for (const folder of folders) walk(folder, found);
  if (found.runs.length === 0) fail(folders.join(', '), 'holds no attention.json');
  found.runs.forEach(checkRunFolder);
  found.indexes.forEach(checkIndex);
  return found;
}

// Each bad file must be refused by the checks above.
function selfTest() {
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'attend-check-json-'));
  const good = JSON.stringify({
    schema: kSchema,
    run: {lesson: 'l', title: 't', kind: 'sequence', seed: 0, flags: ''},
    examples: [{name: 'e', source: ['a'], target: ['b'], maps: [{rows: 1, cols: 2, values: [[0.5, 0.5]]}]}],
  });
  const bad = {
    'NaN': good.replace('[[0.5,0.5]]', '[[NaN,0.5]]'),
    'Infinity': good.replace('[[0.5,0.5]]', '[[Infinity,0.5]]'),
    'a trailing comma': good.replace('[[0.5,0.5]]', '[[0.5,0.5,]]'),
    'a ragged map': good.replace('[[0.5,0.5]]', '[[0.5]]'),
    'another schema': good.replace(kSchema, 'attend-attention/0'),
  };
  try {
    for (const [what, text] of Object.entries(bad)) {
      assert.notStrictEqual(text, good, `the self-test could not make ${what}`);
      const run = path.join(dir, what.replace(/ /g, '_'));
      fs.mkdirSync(run);
      fs.writeFileSync(path.join(run, 'attention.json'), text);
      fs.writeFileSync(path.join(run, 'attention_data.js'), `attendViewer.register("x",\n${good});\n`);
      assert.throws(() => checkRunFolder(run), undefined, `${what} was accepted`);
    }
    const run = path.join(dir, 'other_script');
    fs.mkdirSync(run);
    fs.writeFileSync(path.join(run, 'attention.json'), good);
    fs.writeFileSync(path.join(run, 'attention_data.js'), 'attendViewer.register("x", {});\n');
    assert.throws(() => checkRunFolder(run), /registers other data/, 'another document was accepted');
    fs.writeFileSync(path.join(run, 'attention_data.js'), `attendViewer.register("x",\n${good});\n`);
    checkRunFolder(run);  // and the good one passes
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
  console.log('self-test passed: NaN, Infinity, a trailing comma, a ragged map, another schema ' +
              'and a script of other data are refused; a good run passes');
}

try {
  const args = process.argv.slice(2);
  if (args.length === 1 && args[0] === '--self-test') {
    selfTest();
  } else {
    if (args.length === 0) fail('check_json.js', 'usage: node check_json.js FOLDER... | --self-test');
    const found = check(args);
    console.log(`passed: ${found.runs.length} attention.json (each with its attention_data.js) ` +
                `and ${found.indexes.length} attend_runs.js parse strictly`);
  }
} catch (error) {
  console.log(`FAILED: ${error.message}`);
  process.exit(1);
}
