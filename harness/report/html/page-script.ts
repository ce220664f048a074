/**
 * The page's only script, inlined: it reads the compact JSON the page carries and shows one
 * event's details on hover or focus, and moves focus inside a grid with the arrow keys (the ARIA
 * grid pattern: one tab stop per grid). Plain ES2017 in a string, so it needs no bundling; every
 * value from the data is written with textContent, never as HTML.
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var source = document.getElementById('run-data');
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var tip = document.getElementById('tip');
  var manifest = data.manifest;

  function cellIndex(cell) {
    var row = cell.parentNode;
    return Number(row.getAttribute('data-start')) + Array.prototype.indexOf.call(row.children, cell) - 1;
  }
  function cellAt(grid, index) {
    var cols = Number(grid.getAttribute('data-cols'));
    var rows = grid.querySelectorAll('[role=row]');
    // Unexpected ids start a row of their own, so a cell can sit one row later than index / cols.
    for (var r = Math.min(rows.length - 1, Math.floor(index / cols) + 1); r >= 0; r--) {
      var start = Number(rows[r].getAttribute('data-start'));
      if (start <= index) return rows[r].children[1 + index - start] || null;
    }
    return null;
  }
  function cellCount(grid) {
    var mode = data.modes[grid.getAttribute('data-mode')];
    return mode.states.length + mode.unexpected.length;
  }
  function money(cents) {
    var sign = cents < 0 ? '-' : '';
    var abs = Math.abs(cents);
    return sign + Math.floor(abs / 100).toLocaleString('en-US') + '.' + String(abs % 100).padStart(2, '0');
  }
  function list(csv) {
    return csv ? csv.split(',') : [];
  }
  function describe(modeName, index) {
    var mode = data.modes[modeName];
    var n = mode.states.length;
    if (index >= n) {
      return { id: mode.unexpected[index - n], state: 'e', position: null };
    }
    return {
      id: manifest.eventIds[index],
      state: mode.states.charAt(index),
      position: index + 1,
      account: manifest.accountIds[index],
      amount: manifest.amountCents[index],
      poison: manifest.poison[index],
      applications: mode.applications[index],
      receives: list(mode.receiveCounts[index]),
      crashes: list(mode.crashes[index]),
      seq: manifest.seqs ? manifest.seqs[index] : null,
      late: (mode.outOfOrder || []).indexOf(index) >= 0,
      charges: mode.charges ? mode.charges[index] : null
    };
  }
  function stateText(event) {
    var style = data.states[event.state];
    var label = style.label;
    if (event.state === 'd') label = 'duplicated ×' + event.applications;
    return label;
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function row(parent, term, value) {
    parent.appendChild(el('dt', '', term));
    parent.appendChild(el('dd', '', value));
  }
  function render(modeName, event) {
    tip.textContent = '';
    var head = el('div', 'tip-head');
    var swatch = el('i', 'c ' + event.state, data.glyphs[event.state]);
    if (event.state === 'd') swatch.textContent = String(event.applications);
    head.appendChild(swatch);
    head.appendChild(el('strong', '', stateText(event)));
    tip.appendChild(head);
    var meaning = data.states[event.state].meaning;
    if (event.state === 'd') meaning = meaning.replace('n times', event.applications + ' times');
    tip.appendChild(el('p', 'tip-meaning', meaning));
    var facts = el('dl', 'tip-facts');
    row(facts, 'event', event.id + (event.position ? '  (#' + event.position + ' of ' + manifest.eventIds.length + ')' : '  (never produced)'));
    row(facts, 'mode', modeName);
    if (event.position) {
      row(facts, 'account', event.account + (event.seq ? '  (its event #' + event.seq + ')' : ''));
      row(facts, 'amount', money(event.amount));
      if (event.late) row(facts, 'order', 'applied after a later event of this account');
      if (event.poison) row(facts, 'poison', event.poison + ' (sent as an invalid body)');
      if (event.charges !== null && event.charges !== undefined)
        row(facts, 'charged', event.charges + (event.charges === 1 ? ' time' : ' times') + ' at the payment provider' + (event.charges >= 2 ? ': more than once' : ''));
      row(facts, 'applications', String(event.applications));
      row(facts, 'applied at receive', event.receives.length ? event.receives.join(', ') : '–');
      row(
        facts,
        'crashes',
        event.crashes.length
          ? event.crashes.map(function (r) { return 'at receive ' + r; }).join(', ') + ' — ' + data.crashPoints[modeName]
          : 'none'
      );
    }
    tip.appendChild(facts);
    if (event.position && data.modeOrder.length > 1) {
      var others = el('ul', 'tip-others');
      data.modeOrder.forEach(function (other) {
        var mode = data.modes[other];
        if (!mode) return;
        var item = el('li', other === modeName ? 'current' : '');
        var state = mode.states.charAt(event.position - 1);
        var glyph = state === 'd' ? String(mode.applications[event.position - 1]) : data.glyphs[state];
        item.appendChild(el('i', 'c ' + state, glyph));
        item.appendChild(el('span', '', other + ': ' + (state === 'd' ? 'duplicated ×' + mode.applications[event.position - 1] : data.states[state].label)));
        others.appendChild(item);
      });
      var caption = el('p', 'tip-caption', 'The same event in every mode:');
      tip.appendChild(caption);
      tip.appendChild(others);
    }
  }
  function label(modeName, event) {
    return modeName + ', event ' + event.id + ': ' + stateText(event);
  }
  var current = null;
  function show(cell) {
    current = cell;
    var grid = cell.closest('.grid');
    var modeName = grid.getAttribute('data-mode');
    var event = describe(modeName, cellIndex(cell));
    render(modeName, event);
    cell.setAttribute('aria-label', label(modeName, event));
    tip.hidden = false;
    var box = cell.getBoundingClientRect();
    var width = tip.offsetWidth;
    var height = tip.offsetHeight;
    var left = Math.min(Math.max(8, box.left + box.width / 2 - width / 2), window.innerWidth - width - 8);
    var top = box.bottom + 8;
    if (top + height > window.innerHeight - 8) top = Math.max(8, box.top - height - 8);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }
  function hide() {
    current = null;
    tip.hidden = true;
  }
  function isCell(node) {
    return node && node.classList && node.classList.contains('c') && node.closest('.grid');
  }
  document.addEventListener('mouseover', function (e) {
    if (isCell(e.target)) show(e.target);
    else if (!isCell(document.activeElement) && !tip.contains(e.target)) hide();
  });
  document.addEventListener('focusin', function (e) {
    if (isCell(e.target)) show(e.target);
    else hide();
  });
  // A fixed tooltip would stay behind while the page scrolls: keep it by its cell.
  window.addEventListener('scroll', function () {
    if (!tip.hidden && current && current.isConnected) show(current);
  }, { passive: true });
  document.addEventListener('focusout', function (e) {
    if (isCell(e.target) && !isCell(e.relatedTarget)) hide();
  });
  function moveFocus(from, to) {
    if (from) from.setAttribute('tabindex', '-1');
    to.setAttribute('tabindex', '0');
    to.focus();
  }
  // A click makes the cell the grid's tab stop, so the keyboard goes on from where the mouse was.
  document.addEventListener('click', function (e) {
    if (!isCell(e.target)) return;
    moveFocus(e.target.closest('.grid').querySelector('[tabindex="0"]'), e.target);
  });
  document.addEventListener('keydown', function (e) {
    var cell = document.activeElement;
    if (!isCell(cell)) return;
    if (e.key === 'Escape') { hide(); return; }
    var grid = cell.closest('.grid');
    var cols = Number(grid.getAttribute('data-cols'));
    var index = cellIndex(cell);
    var last = cellCount(grid) - 1;
    var next = {
      ArrowRight: index + 1,
      ArrowLeft: index - 1,
      ArrowDown: index + cols,
      ArrowUp: index - cols,
      PageDown: index + cols * 10,
      PageUp: index - cols * 10,
      Home: e.ctrlKey ? 0 : index - (index % cols),
      End: e.ctrlKey ? last : Math.min(last, index - (index % cols) + cols - 1)
    }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    next = Math.max(0, Math.min(last, next));
    var target = cellAt(grid, next);
    if (!target || target === cell) return;
    moveFocus(cell, target);
  });
})();
`;
