// jitscope-report --format html: DOM helpers and the paged, sortable table
// every table of the page is.
// Part of the page's script: tools/report/html/embed.cmake joins report_*.js
// in the order CMakeLists.txt lists them into one script element (one scope).
'use strict';

const PAGE_SIZE = 100;  // rows per page of every table

// The SVG namespace, from an inline <svg> the HTML parser put in it: the
// page holds no URL text at all.
function svgNamespace() {
  return document.getElementById('svg-namespace').namespaceURI;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return e;
}
function svgEl(tag, attrs) {
  const e = document.createElementNS(svgNamespace(), tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
function svgTitle(parent, text) {
  const t = svgEl('title');
  t.textContent = text;
  parent.appendChild(t);
}
function pidText(pid) {
  return pid === null || pid === undefined ? '' : String(pid);
}
// A colour per name, stable across reports.
function nameColor(name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; ++i) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return 'hsl(' + (Math.abs(h) % 360) + ',55%,62%)';
}

// A table over all of `rows`: sorting (every row, not just the page),
// optional filter and paging. columns: {key, label, num, sort(row), cell(row, td)}.
class DataTable {
  constructor(opts) {
    Object.assign(this, opts);
    this.order = this.rows.map((_, i) => i);
    this.view = this.order;
    this.page = 0;
    this.sortKey = null;
    this.sortDir = 1;
    this.buildHead();
    if (this.pager) {
      this.pager.querySelector('.page-prev').addEventListener('click', () => this.go(-1));
      this.pager.querySelector('.page-next').addEventListener('click', () => this.go(1));
    }
    if (this.filterInput) {
      this.filterInput.addEventListener('input', () => this.applyFilter());
    }
    this.render();
  }
  buildHead() {
    const tr = el('tr');
    for (const c of this.columns) {
      const th = el('th', { class: c.num ? 'num' : null, title: c.title || null }, c.label);
      if (c.sort) {
        th.dataset.key = c.key;
        th.tabIndex = 0;  // sortable from the keyboard too: Enter or Space
        th.addEventListener('click', () => this.sortBy(c.key));
        th.addEventListener('keydown', (ev) => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            this.sortBy(c.key);
          }
        });
      }
      tr.appendChild(th);
    }
    const thead = this.table.tHead || this.table.createTHead();
    thead.textContent = '';
    thead.appendChild(tr);
    if (!this.table.tBodies.length) this.table.appendChild(el('tbody'));
  }
  sortBy(key) {
    const col = this.columns.find((c) => c.key === key);
    if (!col) return;
    this.sortDir = this.sortKey === key ? -this.sortDir : 1;  // first click: ascending
    this.sortKey = key;
    const values = this.rows.map((r) => col.sort(r));
    const dir = this.sortDir;
    // Stable: ties keep the report's order.
    this.order = this.rows.map((_, i) => i);
    this.order.sort((a, b) => {
      const an = values[a] === null || values[a] === undefined;
      const bn = values[b] === null || values[b] === undefined;
      if (an || bn) return an === bn ? a - b : an ? 1 : -1;  // empty cells last either way
      return dir * compareValues(values[a], values[b]) || a - b;
    });
    for (const th of this.table.tHead.querySelectorAll('th[data-key]')) {
      if (th.dataset.key === key) {
        th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
      } else {
        th.removeAttribute('aria-sort');
      }
    }
    this.applyFilter(false);  // a new order starts at its first page
  }
  applyFilter(keepPage) {
    const q = this.filterInput ? this.filterInput.value.trim().toLowerCase() : '';
    this.view = q ? this.order.filter((i) => this.matches(this.rows[i], q)) : this.order;
    if (!keepPage) this.page = 0;
    this.page = Math.min(this.page, Math.max(0, Math.ceil(this.view.length / PAGE_SIZE) - 1));
    this.render();
  }
  go(delta) {
    const pages = Math.max(1, Math.ceil(this.view.length / PAGE_SIZE));
    this.page = Math.min(pages - 1, Math.max(0, this.page + delta));
    this.render();
  }
  render() {
    const body = this.table.tBodies[0];
    body.textContent = '';
    const first = this.page * PAGE_SIZE;
    const last = Math.min(this.view.length, first + PAGE_SIZE);
    const frag = document.createDocumentFragment();
    for (let k = first; k < last; ++k) {
      const row = this.rows[this.view[k]];
      const tr = el('tr', this.rowAttrs ? this.rowAttrs(row) : null);
      for (const c of this.columns) {
        const td = el('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null });
        c.cell(row, td);
        tr.appendChild(td);
      }
      frag.appendChild(tr);
    }
    body.appendChild(frag);
    if (this.pager) {
      const info = this.pager.querySelector('.page-info');
      info.textContent =
        (this.view.length ? first + 1 : 0) + '–' + last + ' of ' + this.view.length;
      this.pager.querySelector('.page-prev').disabled = this.page === 0;
      this.pager.querySelector('.page-next').disabled = last >= this.view.length;
    }
    if (this.afterRender) this.afterRender();
  }
  // Shows the row at rows[index]: clears a filter hiding it, turns to its page.
  reveal(index) {
    let pos = this.view.indexOf(index);
    if (pos < 0 && this.filterInput) {
      this.filterInput.value = '';
      this.applyFilter(true);
      pos = this.view.indexOf(index);
    }
    if (pos < 0) return;
    this.page = Math.floor(pos / PAGE_SIZE);
    this.render();
  }
}

const textCell = (f) => (row, td) => {
  td.textContent = f(row) ?? '';
};
const nsCell = (f) => (row, td) => {
  const v = f(row);
  td.textContent = v === null || v === undefined ? '' : humanNs(v);
  if (v !== null && v !== undefined) td.title = v + ' ns';
};
