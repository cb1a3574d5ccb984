// jitscope-report --format html: the caches section (CompileUnit::cache_lookup,
// docs/caches.md): per layer its lookups, and per miss reason (the key parts
// that differ from the nearest earlier key of the layer) its count and its
// first miss's change. One part of the page's script (html/embed.cmake).
'use strict';

// "options: -O2 → -O3; target: (none) → sm_90"
function cacheChangeText(changes) {
  const side = (v) => (v === null || v === undefined ? '(none)' : v);
  return (changes || []).map((c) => c.part + ': ' + side(c.was) + ' → ' + side(c.now)).join('; ');
}

function buildCaches(page) {
  const layers = page.data.caches;
  const sec = document.getElementById('caches');
  if (!sec || !layers || !layers.length) return;
  let lookups = 0;
  let misses = 0;
  for (const l of layers) {
    lookups += l.lookups;
    misses += l.misses;
  }
  document.getElementById('caches-note').textContent =
    layers.length + (layers.length === 1 ? ' layer, ' : ' layers, ') + lookups + ' lookups, ' +
    misses + ' misses. A miss is explained by the parts of its key that differ from the ' +
    'nearest earlier key of its layer (the fewest differing parts, then the latest).';
  const count = (key, label, f) => ({ key, label, num: true, sort: f, cls: key, cell: textCell(f) });
  new DataTable({
    table: document.getElementById('caches-table'),
    rows: layers,
    rowAttrs: (l) => ({ 'data-layer': l.layer }),
    columns: [
      { key: 'layer', label: 'layer', sort: (l) => l.layer, cls: 'layer', cell: textCell((l) => l.layer) },
      count('lookups', 'lookups', (l) => l.lookups),
      count('hits', 'hits', (l) => l.hits),
      count('misses', 'misses', (l) => l.misses),
      { key: 'hit_rate', label: 'hit rate', num: true, sort: (l) => (l.lookups ? l.hits / l.lookups : null),
        cell: textCell((l) => (l.lookups ? (100 * l.hits / l.lookups).toFixed(1) + '%' : '')) },
      { key: 'parts', label: 'misses per differing part', cls: 'parts',
        cell: textCell((l) => (l.parts || []).map((p) => p.part + ' ' + p.misses).join(', ')),
        title: 'a miss whose key differs in two parts counts for both' },
      { key: 'keys_forgotten', label: 'keys forgotten', num: true, sort: (l) => l.keys_forgotten,
        cell: textCell((l) => l.keys_forgotten),
        title: 'distinct keys beyond the 512 used last, no longer compared' },
    ],
  });
  const reasons = [];
  for (const l of layers) {
    for (const r of l.reasons || []) reasons.push({ layer: l.layer, ...r });
  }
  new DataTable({
    table: document.getElementById('cache-misses-table'),
    pager: document.getElementById('cache-misses-pager'),
    rows: reasons,
    rowAttrs: (r) => ({ 'data-layer': r.layer, 'data-reason': r.reason }),
    columns: [
      { key: 'layer', label: 'layer', sort: (r) => r.layer, cell: textCell((r) => r.layer) },
      { key: 'reason', label: 'reason', sort: (r) => r.reason, cls: 'reason', cell: textCell((r) => r.reason) },
      count('misses', 'misses', (r) => r.misses),
      { key: 'first_unit', label: 'first miss', sort: (r) => r.first_unit, cell: textCell((r) => r.first_unit) },
      { key: 'first_changes', label: 'what changed then', cls: 'change',
        cell: textCell((r) => cacheChangeText(r.first_changes)) },
    ],
  });
}
