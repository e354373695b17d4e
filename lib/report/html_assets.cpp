// The stylesheet and script of the HTML report, inlined into every report so
// the file works offline and from anywhere (no CDN, no network: the page's
// Content-Security-Policy forbids fetching anything).
#include "report/html_report.h"

namespace qairt::report {

std::string_view ReportCss() {
  return R"css(
:root{--int4:#7b3fb5;--int8:#1f6fd1;--int16:#138a72;--int32:#56606b;--fp16:#d9822b;--bf16:#b8860b;--fp32:#c23b3b;--other:#8a8f98}
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;background:#f6f7f9}
header{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid #d8dce3;padding:8px 14px}
h1{font-size:16px;margin:0 0 4px}
h2{font-size:15px;margin:0 0 8px}
h3{font-size:13px;margin:12px 0 6px}
#summary p{margin:2px 0}
.legend .key{display:inline-block;margin:2px 6px 2px 0;padding:1px 6px;border-radius:3px;border-left:6px solid var(--other);background:#eef0f3}
.key.p-int4,.op.p-int4{border-left-color:var(--int4)}
.key.p-int8,.op.p-int8{border-left-color:var(--int8)}
.key.p-int16,.op.p-int16{border-left-color:var(--int16)}
.key.p-int32,.op.p-int32{border-left-color:var(--int32)}
.key.p-fp16,.op.p-fp16{border-left-color:var(--fp16)}
.key.p-bf16,.op.p-bf16{border-left-color:var(--bf16)}
.key.p-fp32,.op.p-fp32{border-left-color:var(--fp32)}
.key.convert{border-left-color:#444;background:repeating-linear-gradient(45deg,#eef0f3,#eef0f3 4px,#dde1e7 4px,#dde1e7 8px)}
.key.fallback{border-left-color:var(--fp32);outline:2px solid var(--fp32)}
.key.sg{border-left-color:#999;outline:1px dashed #666}
#tools{margin-top:4px;display:flex;gap:8px;align-items:center}
#search{width:320px;padding:3px 6px;font:inherit}
button{font:inherit;padding:2px 8px}
main{display:flex;align-items:flex-start;gap:0}
#graph{flex:1;position:relative;overflow-x:auto;padding:10px 14px 24px;min-width:0}
#edges{position:absolute;left:0;top:0;pointer-events:none;overflow:visible}
#edges path{fill:none;stroke:#9aa3b1;stroke-width:1}
#edges rect{fill:none;stroke:#555;stroke-dasharray:4 3;stroke-width:1}
#edges text{font-size:10px;fill:#555}
.row{display:flex;justify-content:center;gap:14px;margin:0 0 22px;min-width:max-content}
.section>summary{cursor:pointer;color:#555;margin:0 0 8px;font-size:12px}
.op{position:relative;z-index:1;background:#fff;border:1px solid #c9ced6;border-left:6px solid var(--other);border-radius:4px;padding:3px 7px;min-width:90px;max-width:220px;cursor:pointer;box-shadow:0 1px 1px rgba(0,0,0,.05)}
.op .ty{font-weight:600;margin-right:6px}
.op .pr{font-size:10px;color:#555}
.op .nm{display:block;font-size:10px;color:#667;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.op .acc{float:right;font-size:10px;margin-left:6px;padding:0 3px;border-radius:2px}
.acc.good{background:#d8f0de}.acc.fair{background:#fbeec9}.acc.poor{background:#f7d4d4}.acc.fused{background:#e3e6eb;color:#555}
.op.convert{background:repeating-linear-gradient(45deg,#fff,#fff 5px,#eef0f3 5px,#eef0f3 10px)}
.op.fallback{outline:2px solid var(--fp32)}
.op.hit{box-shadow:0 0 0 3px #ffd54a}
.op.selected{box-shadow:0 0 0 3px #1d2330}
.io{background:#1d2330;color:#fff;border-radius:10px;padding:2px 10px;font-size:11px}
.io small{color:#c8ccd4}
aside#details{width:380px;flex:none;position:sticky;top:96px;max-height:calc(100vh - 110px);overflow:auto;background:#fff;border-left:1px solid #d8dce3;padding:10px 12px}
#details .hint{color:#667}
#details dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:0 0 8px}
#details dt{color:#667}
#details dd{margin:0;word-break:break-all}
#details .tensor{border-top:1px solid #e3e6eb;padding-top:6px;margin-top:6px}
section{background:#fff;border-top:1px solid #d8dce3;padding:12px 14px}
table{border-collapse:collapse}
td,th{border:1px solid #e3e6eb;padding:2px 8px;text-align:left;vertical-align:top}
pre{margin:0;white-space:pre-wrap;font-size:12px}
li.error{color:#a31515}li.warning{color:#8a5a00}
.plot svg{max-width:100%;height:auto}
)css";
}

std::string_view ReportScript() {
  return R"js(
(function () {
  'use strict';
  var body = document.body;
  window.addEventListener('error', function () {
    body.dataset.jsErrors = String((+body.dataset.jsErrors || 0) + 1);
  });
  var data = JSON.parse(document.getElementById('qairt-data').textContent);
  var graph = document.getElementById('graph');
  var svg = document.getElementById('edges');
  var details = document.getElementById('details');
  var NS = 'http://www.w3.org/2000/svg';
  var producer = {};
  data.ops.forEach(function (op, i) {
    op.outputs.forEach(function (t) { if (!(t in producer)) producer[t] = i; });
  });
  var groups = {};
  data.ops.forEach(function (op, i) {
    if (op.super_group >= 0) (groups[op.super_group] = groups[op.super_group] || []).push(i);
  });

  function byId(id) { return document.getElementById(id); }
  function shown(e) { return !!e && e.getClientRects().length > 0; }

  // Edges and super-group outlines, from the laid-out boxes; only between
  // ops whose sections are open.
  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var g = graph.getBoundingClientRect();
    svg.setAttribute('width', graph.scrollWidth);
    svg.setAttribute('height', graph.scrollHeight);
    var cache = {};
    function at(id) {
      if (!(id in cache)) {
        var e = byId(id);
        if (shown(e)) {
          var r = e.getBoundingClientRect();
          cache[id] = { x: r.left - g.left + graph.scrollLeft, y: r.top - g.top + graph.scrollTop, w: r.width, h: r.height };
        } else cache[id] = null;
      }
      return cache[id];
    }
    var frag = document.createDocumentFragment();
    data.ops.forEach(function (op, i) {
      var b = at('o' + i);
      if (!b) return;
      op.inputs.forEach(function (t) {
        if (t < 0) return;
        var a = at(t in producer ? 'o' + producer[t] : 't' + t);
        if (!a) return;
        var x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y, my = (y1 + y2) / 2;
        var p = document.createElementNS(NS, 'path');
        p.setAttribute('d', 'M' + x1 + ',' + y1 + ' C' + x1 + ',' + my + ' ' + x2 + ',' + my + ' ' + x2 + ',' + y2);
        frag.appendChild(p);
      });
    });
    Object.keys(groups).forEach(function (id) {
      if (groups[id].length < 2) return;
      var box = null;
      groups[id].forEach(function (i) {
        var b = at('o' + i);
        if (!b) return;
        if (!box) box = { x0: b.x, y0: b.y, x1: b.x + b.w, y1: b.y + b.h };
        else {
          box.x0 = Math.min(box.x0, b.x); box.y0 = Math.min(box.y0, b.y);
          box.x1 = Math.max(box.x1, b.x + b.w); box.y1 = Math.max(box.y1, b.y + b.h);
        }
      });
      if (!box) return;
      var r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', box.x0 - 5); r.setAttribute('y', box.y0 - 5);
      r.setAttribute('width', box.x1 - box.x0 + 10); r.setAttribute('height', box.y1 - box.y0 + 10);
      r.setAttribute('rx', 6);
      frag.appendChild(r);
      var label = document.createElementNS(NS, 'text');
      label.setAttribute('x', box.x1 + 8); label.setAttribute('y', box.y0 + 8);
      label.textContent = 'super group ' + id;
      frag.appendChild(label);
    });
    svg.appendChild(frag);
  }
  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  }

  function add(parent, tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function fields(parent, rows) {
    var dl = add(parent, 'dl');
    rows.forEach(function (r) {
      if (r[1] === undefined || r[1] === null || r[1] === '') return;
      add(dl, 'dt', null, r[0]);
      add(dl, 'dd', null, String(r[1]));
    });
  }
  function num(x) { return x === null || x === undefined ? 'n/a' : Number(x).toPrecision(6); }
  function encodingText(e) {
    if (!e) return 'none';
    var s = e.kind + ' ' + e.dtype + ' ' + e.bitwidth + '-bit' + (e.symmetry ? ' ' + e.symmetry : '');
    if (e.overridden) s += ', from the overrides file';
    return s;
  }
  function encodingRows(e) {
    if (!e) return [];
    var rows = [];
    if (e.scales === 1) rows.push(['scale', num(e.scale_min)]);
    else if (e.scales > 1) rows.push(['scales', e.scales + ' from ' + num(e.scale_min) + ' to ' + num(e.scale_max)]);
    if (e.offset_min !== undefined)
      rows.push(['offset', e.offset_min === e.offset_max ? e.offset_min : e.offset_min + ' … ' + e.offset_max]);
    if (e.min !== undefined) rows.push(['range', '[' + num(e.min) + ', ' + num(e.max) + ']']);
    if (e.axis !== undefined) rows.push(['axis', e.axis]);
    if (e.block_sizes) rows.push(['block sizes', e.block_sizes.join(' × ')]);
    if (e.decompressed_bitwidth) rows.push(['decompressed', e.decompressed_bitwidth + '-bit']);
    return rows;
  }
  function tensorPanel(parent, role, id) {
    if (id < 0) { add(parent, 'div', 'tensor', role + ': (absent)'); return; }
    var t = data.tensors[id];
    var div = add(parent, 'div', 'tensor');
    add(div, 'b', null, role + ': ' + t.name);
    var rows = [['kind', t.kind + (t.output ? ', graph output' : '')], ['type', t.dtype + ' ' + t.shape],
                ['encoding', encodingText(t.encoding)]].concat(encodingRows(t.encoding));
    if (t.reasons) rows.push(['reasons', t.reasons.split('^').join(', ')]);
    if (t.accuracy) rows.push(['SQNR vs float', t.accuracy.exact ? 'exact' : num(t.accuracy.sqnr_db) + ' dB (cosine ' + num(t.accuracy.cosine) + ')']);
    fields(div, rows);
  }
  var selected = null;
  function select(i) {
    if (selected) selected.classList.remove('selected');
    selected = byId('o' + i);
    if (selected) selected.classList.add('selected');
    var op = data.ops[i];
    details.textContent = '';
    add(details, 'h2', null, op.name);
    fields(details, [['type', op.type], ['source', op.source ? op.source + (op.source_type ? ' (' + op.source_type + ')' : '') : ''],
                     ['precision', op.precision], ['kernel', op.kernel],
                     ['super group', op.super_group >= 0 ? op.super_group : ''],
                     ['adapted', op.adapted ? 'yes: its requested data types were adapted' : '']]);
    var names = {};
    op.inputs.concat(op.outputs).forEach(function (t) { if (t >= 0) names[data.tensors[t].name] = true; });
    var notes = data.diagnostics.filter(function (d) { return d.op === op.name || names[d.tensor]; });
    if (notes.length) {
      var ul = add(details, 'ul');
      notes.forEach(function (d) { add(ul, 'li', d.severity, d.text); });
    }
    op.inputs.forEach(function (t, k) { tensorPanel(details, 'input ' + k, t); });
    op.outputs.forEach(function (t, k) { tensorPanel(details, 'output ' + k, t); });
  }
  function reveal(e) {
    var d = e.closest('details');
    if (d && !d.open) d.open = true;
    e.scrollIntoView({ block: 'center', inline: 'center' });
    select(+e.dataset.idx);
  }
  graph.addEventListener('click', function (ev) {
    var e = ev.target.closest('.op');
    if (e) select(+e.dataset.idx);
  });
  document.querySelectorAll('a.focus-tensor').forEach(function (a) {
    a.addEventListener('click', function (ev) {
      ev.preventDefault();
      var name = a.dataset.tensor;
      for (var t = 0; t < data.tensors.length; ++t) {
        if (data.tensors[t].name === name && t in producer) { reveal(byId('o' + producer[t])); return; }
      }
    });
  });

  var search = byId('search'), hits = byId('hits'), matches = [], current = -1;
  function next() {
    if (!matches.length) return;
    current = (current + 1) % matches.length;
    reveal(matches[current]);
  }
  search.addEventListener('input', function () {
    var q = search.value.trim().toLowerCase();
    matches.forEach(function (e) { e.classList.remove('hit'); });
    matches = []; current = -1;
    if (q) {
      data.ops.forEach(function (op, i) {
        if (op.name.toLowerCase().indexOf(q) >= 0 || op.type.toLowerCase() === q) {
          var e = byId('o' + i);
          e.classList.add('hit');
          matches.push(e);
        }
      });
    }
    hits.textContent = q ? matches.length + (matches.length === 1 ? ' match' : ' matches') + (matches.length ? ' (Enter: next)' : '') : '';
    next();
  });
  search.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') next(); });
  function setAll(open) {
    document.querySelectorAll('#graph details').forEach(function (d) { d.open = open; });
    redraw();
  }
  byId('expand').addEventListener('click', function () { setAll(true); });
  byId('collapse').addEventListener('click', function () { setAll(false); });
  document.querySelectorAll('#graph details').forEach(function (d) { d.addEventListener('toggle', redraw); });
  window.addEventListener('resize', redraw);
  // Deep links: REPORT.html#op=NAME selects an op, #search=TEXT searches.
  function fromHash() {
    var h;
    try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (h.indexOf('op=') === 0) {
      var name = h.slice(3);
      for (var i = 0; i < data.ops.length; ++i)
        if (data.ops[i].name === name) { reveal(byId('o' + i)); return; }
    } else if (h.indexOf('search=') === 0) {
      search.value = h.slice(7);
      search.dispatchEvent(new Event('input'));
    }
  }
  window.addEventListener('hashchange', fromHash);
  draw();
  fromHash();
  body.dataset.ready = '1';
})();
)js";
}

}  // namespace qairt::report
