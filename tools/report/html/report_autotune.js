// jitscope-report --format html: the autotune section (jitscope::Autotune,
// docs/autotuning.md): per tuning session its trials, compile and benchmark
// time, wall time, time to the winner and time on trials that did not win;
// then every trial with its config, its compile (linked to its units) and
// its benchmark. One part of the page's script (html/embed.cmake).
'use strict';

function buildAutotune(page) {
  const sessions = page.data.autotune;
  const sec = document.getElementById('autotune');
  if (!sec || !sessions || !sessions.length) return;
  let trials = 0;
  let compile = 0;
  let bench = 0;
  let notWon = 0;
  for (const s of sessions) {
    trials += s.trials;
    compile += s.compile_ns;
    bench += s.benchmark_ns;
    notWon += s.not_won_ns;
  }
  const multiPid = new Set(sessions.map((s) => pidText(s.pid))).size > 1;
  document.getElementById('autotune-note').textContent =
    sessions.length + (sessions.length === 1 ? ' tuning session, ' : ' tuning sessions, ') +
    trials + ' trials: ' + humanNs(compile) + ' compiling, ' + humanNs(bench) +
    ' benchmarking, ' + humanNs(notWon) + ' of it on trials that did not win. Compile and ' +
    'benchmark times are summed over trials (compiles on a pool overlap); wall time and time ' +
    'to the winner are the session\'s own.';
  const ns = (key, label, f, title) => ({ key, label, num: true, sort: f, cls: key, cell: nsCell(f), title });
  const winnerText = (s) => (s.winner === null ? '(none)' : '#' + s.winner + ' ' + s.winner_config);
  const columns = [
    { key: 'kernel', label: 'kernel', sort: (s) => s.kernel, cls: 'kernel', cell: textCell((s) => s.kernel) },
    { key: 'trials', label: 'trials', num: true, sort: (s) => s.trials, cls: 'trials', cell: textCell((s) => s.trials) },
    ns('compile_ns', 'compile', (s) => s.compile_ns),
    ns('benchmark_ns', 'benchmark', (s) => s.benchmark_ns),
    ns('wall_ns', 'wall', (s) => s.wall_ns),
    ns('time_to_winner_ns', 'to winner', (s) => s.time_to_winner_ns,
      'from the session\'s start to the end of the winner\'s last step or unit'),
    ns('not_won_ns', 'not won', (s) => s.not_won_ns, 'compile and benchmark of the trials that did not win'),
    { key: 'winner', label: 'winner', sort: (s) => winnerText(s), cls: 'winner', cell: textCell(winnerText) },
  ];
  if (multiPid) {
    columns.unshift({ key: 'pid', label: 'pid', sort: (s) => pidText(s.pid), cell: textCell((s) => pidText(s.pid)) });
  }
  new DataTable({
    table: document.getElementById('autotune-table'),
    rows: sessions,
    rowAttrs: (s) => ({ 'data-kernel': s.kernel, 'data-tune': String(s.tune) }),
    columns,
  });
  const rows = [];
  for (const s of sessions) {
    for (const t of s.trial_rows || []) rows.push({ kernel: s.kernel, pid: s.pid, tune: s.tune, ...t });
  }
  const note = (t) => {
    const parts = [];
    if (t.winner) parts.push('winner');
    if (t.failed !== null) parts.push('failed: ' + t.failed);
    if (t.units_missing) parts.push(t.units_missing + ' unit(s) not in the trace');
    return parts.join('; ');
  };
  new DataTable({
    table: document.getElementById('autotune-trials-table'),
    pager: document.getElementById('autotune-trials-pager'),
    rows,
    rowAttrs: (t) => ({ 'data-kernel': t.kernel, 'data-trial': String(t.trial), 'data-winner': t.winner ? '1' : null }),
    columns: [
      { key: 'kernel', label: 'kernel', sort: (t) => t.kernel, cls: 'kernel', cell: textCell((t) => t.kernel) },
      { key: 'trial', label: 'trial', num: true, sort: (t) => t.trial, cls: 'trial', cell: textCell((t) => t.trial) },
      { key: 'config', label: 'config', sort: (t) => t.config, cls: 'config', cell: textCell((t) => t.config) },
      ns('compile_ns', 'compile', (t) => t.compile_ns),
      ns('benchmark_ns', 'benchmark', (t) => t.benchmark_ns),
      { key: 'result', label: 'result', num: true, sort: (t) => t.result, cls: 'result',
        cell: textCell((t) => (t.result === null ? '' : String(t.result))) },
      { key: 'units', label: 'compile units', cls: 'units',
        cell: (t, td) => {
          t.units.forEach((id, i) => {
            if (i > 0) td.append(', ');
            td.append(page.unitIndex.has(pidText(t.pid) + ':' + id) ? unitLink(t.pid, id) : id);
          });
        } },
      { key: 'note', label: 'note', sort: note, cls: 'note', cell: textCell(note) },
    ],
  });
}
