/*
 * The db-lock console: reads the locks as the dblock actuator endpoint returns them, every
 * refresh interval, renders them, and moves the countdowns between reads. Plain JavaScript,
 * no library: the page loads nothing but this file and its style sheet.
 */
(function () {
  'use strict';

  var base = document.querySelector('meta[name="db-lock-console-base"]').content;

  var state = {
    snapshot: null,
    // the database's time when the snapshot was read, and this page's monotonic clock then
    clockMs: 0,
    fetchedAt: 0,
    refreshMillis: 2000,
    timer: null,
    sequence: 0,
    pending: null,
    noticeTimer: null
  };

  function byId(id) {
    return document.getElementById(id);
  }

  function meta(name) {
    var element = document.querySelector('meta[name="' + name + '"]');
    return element ? element.content : null;
  }

  /* Spring Security's token: the _csrf meta tags of the page, else the XSRF-TOKEN cookie. */
  function csrf() {
    var token = meta('_csrf');
    var header = meta('_csrf_header');
    if (token && header) {
      return { header: header, token: token };
    }
    var cookie = document.cookie.split(';').map(function (c) { return c.trim(); })
      .filter(function (c) { return c.indexOf('XSRF-TOKEN=') === 0; })[0];
    if (cookie) {
      return { header: 'X-XSRF-TOKEN', token: decodeURIComponent(cookie.substring('XSRF-TOKEN='.length)) };
    }
    return null;
  }

  /* An instant as JSON writes it: ISO-8601 text (any number of fraction digits) or epoch seconds or millis. */
  function parseInstant(value) {
    if (value === null || value === undefined) {
      return NaN;
    }
    if (typeof value === 'number') {
      return (Math.abs(value) > 1e11) ? value : value * 1000;
    }
    var text = String(value).replace(/(\.\d{3})\d+/, '$1');
    return Date.parse(text);
  }

  /* A duration as JSON writes it: ISO-8601 (PT1M2.5S) or seconds; in milliseconds. */
  function parseDuration(value) {
    if (typeof value === 'number') {
      return value * 1000;
    }
    var match = /^(-)?P(?:(\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$/.exec(String(value));
    if (!match) {
      return NaN;
    }
    var ms = ((+match[2] || 0) * 86400 + (+match[3] || 0) * 3600 + (+match[4] || 0) * 60 + (+match[5] || 0)) * 1000;
    return match[1] ? -ms : ms;
  }

  function pad(n, width) {
    var text = String(n);
    while (text.length < (width || 2)) {
      text = '0' + text;
    }
    return text;
  }

  function formatDuration(ms) {
    if (isNaN(ms)) {
      return '–';
    }
    var seconds = ms / 1000;
    if (seconds < 60) {
      return seconds.toFixed(1) + ' s';
    }
    var total = Math.floor(seconds);
    if (total < 3600) {
      return Math.floor(total / 60) + ' min ' + pad(total % 60) + ' s';
    }
    if (total < 86400) {
      return Math.floor(total / 3600) + ' h ' + pad(Math.floor(total / 60) % 60) + ' min';
    }
    return Math.floor(total / 86400) + ' d ' + pad(Math.floor(total / 3600) % 24) + ' h';
  }

  function formatTime(ms) {
    if (isNaN(ms)) {
      return '–';
    }
    var date = new Date(ms);
    var time = pad(date.getHours()) + ':' + pad(date.getMinutes()) + ':' + pad(date.getSeconds()) + '.'
      + pad(date.getMilliseconds(), 3);
    var now = new Date();
    if (date.toDateString() === now.toDateString()) {
      return time;
    }
    return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate()) + ' ' + time;
  }

  /* The database's now, moved on by this page's clock since the last read. */
  function databaseNow() {
    return state.clockMs + (performance.now() - state.fetchedAt);
  }

  /* An owner id reads host/process/instance#counter. */
  function ownerParts(owner) {
    var parts = String(owner).split('/');
    if (parts.length < 3) {
      return { host: '–', process: '–' };
    }
    return { host: parts[0], process: parts[1] };
  }

  function cell(row, text, className, title) {
    var td = document.createElement('td');
    td.textContent = (text === null || text === undefined || text === '') ? '–' : String(text);
    if (className) {
      td.className = className;
    }
    if (title) {
      td.title = title;
    }
    row.appendChild(td);
    return td;
  }

  function emptyRow(tbody, columns, text) {
    var tr = document.createElement('tr');
    tr.className = 'empty';
    var td = document.createElement('td');
    td.colSpan = columns;
    td.textContent = text;
    tr.appendChild(td);
    tbody.appendChild(tr);
  }

  function filters() {
    return {
      name: byId('filter-name').value.trim().toLowerCase(),
      mode: byId('filter-mode').value
    };
  }

  function matches(filter, key, mode) {
    if (filter.name && String(key).toLowerCase().indexOf(filter.name) < 0) {
      return false;
    }
    return !filter.mode || mode === filter.mode;
  }

  function addModeOptions(modes) {
    var select = byId('filter-mode');
    modes.forEach(function (mode) {
      if (mode && !Array.prototype.some.call(select.options, function (o) { return o.value === mode; })) {
        var option = document.createElement('option');
        option.value = mode;
        option.textContent = mode;
        select.appendChild(option);
      }
    });
  }

  function renderLocks(report, heldModes, filter, releaseAllowed) {
    var tbody = byId('locks').tBodies[0];
    var fragment = document.createDocumentFragment();
    var shown = 0;
    (report.rows || []).forEach(function (row) {
      var mode = row.mode || heldModes[row.key] || '';
      if (!matches(filter, row.key, mode)) {
        return;
      }
      shown++;
      var owner = ownerParts(row.owner);
      var tr = document.createElement('tr');
      tr.dataset.key = row.key;
      tr.dataset.mode = mode;
      cell(tr, row.key, 'key mono');
      cell(tr, mode, 'mode', mode ? null : 'held by another node: the lock table does not say its mode');
      cell(tr, row.owner, 'owner mono');
      cell(tr, owner.host, 'host');
      cell(tr, owner.process, 'process mono num');
      cell(tr, row.token, 'token mono num');
      var acquired = parseInstant(row.acquiredAt);
      cell(tr, formatTime(acquired), 'acquired', row.acquiredAt ? String(row.acquiredAt)
        : 'the database does not keep when this mode\'s locks were taken');
      var left = cell(tr, '', 'time-left num', 'lease ends ' + row.expiresAt);
      left.dataset.expiresAt = String(parseInstant(row.expiresAt));
      var actions = cell(tr, '', 'actions');
      actions.textContent = '';
      // the endpoint's release deletes rows of the lease table only
      if (releaseAllowed && (!row.mode || row.mode === 'lease')) {
        var button = document.createElement('button');
        button.type = 'button';
        button.className = 'release-button danger';
        button.textContent = 'Release';
        button.title = 'Force-release this lock';
        button.addEventListener('click', function () {
          openRelease({ key: row.key, owner: row.owner, token: row.token });
        });
        actions.appendChild(button);
      }
      fragment.appendChild(tr);
    });
    tbody.replaceChildren(fragment);
    if (shown === 0) {
      emptyRow(tbody, 9, (report.rows || []).length ? 'No lock matches the filters.' : 'No lock is held.');
    }
    byId('locks-count').textContent = countText(shown, (report.rows || []).length);
    byId('truncated').hidden = !report.truncated;
  }

  function countText(shown, total) {
    return (shown === total) ? '(' + total + ')' : '(' + shown + ' of ' + total + ')';
  }

  function renderHeld(report, filter) {
    var held = report.heldHere || [];
    var tbody = byId('held').tBodies[0];
    var fragment = document.createDocumentFragment();
    var shown = 0;
    held.forEach(function (item) {
      if (!matches(filter, item.key, item.mode)) {
        return;
      }
      shown++;
      var tr = document.createElement('tr');
      tr.dataset.key = item.key;
      cell(tr, item.key, 'key mono');
      cell(tr, item.mode, 'mode');
      cell(tr, item.thread, 'thread mono');
      var heldFor = cell(tr, '', 'held-for num');
      heldFor.dataset.heldFor = String(parseDuration(item.heldFor));
      fragment.appendChild(tr);
    });
    tbody.replaceChildren(fragment);
    if (shown === 0) {
      emptyRow(tbody, 4, held.length ? 'No lock matches the filters.' : 'No thread of this node holds a lock.');
    }
    byId('held-count').textContent = countText(shown, held.length);
  }

  /* The keys this node's threads wait for; hidden where the endpoint does not list them. */
  function renderWaiting(report, filter) {
    var waiting = report.waitingHere;
    var section = byId('waiting-section');
    if (!Array.isArray(waiting)) {
      section.hidden = true;
      return;
    }
    section.hidden = false;
    var tbody = byId('waiting').tBodies[0];
    var fragment = document.createDocumentFragment();
    var shown = 0;
    var threads = 0;
    waiting.forEach(function (item) {
      threads += item.threads;
      if (!matches(filter, item.key, item.mode)) {
        return;
      }
      shown++;
      var tr = document.createElement('tr');
      tr.dataset.key = item.key;
      cell(tr, item.key, 'key mono');
      cell(tr, item.mode, 'mode');
      cell(tr, item.threads, 'threads num');
      fragment.appendChild(tr);
    });
    tbody.replaceChildren(fragment);
    if (shown === 0) {
      emptyRow(tbody, 3, waiting.length ? 'No key matches the filters.' : 'No thread of this node waits for a key.');
    }
    byId('waiting-count').textContent = countText(shown, waiting.length);
    byId('waiting-count').title = threads + ' thread' + (threads === 1 ? '' : 's') + ' waiting';
  }

  /*
   * The lock log as a timeline: one track per key, the keys with the latest holds first, each
   * hold a bar from its start to its end (or to now while held), coloured by its outcome.
   */
  function renderLog(report, filter) {
    var log = report.log;
    var section = byId('log-section');
    if (!Array.isArray(log)) {
      section.hidden = true;
      return;
    }
    section.hidden = false;
    var now = databaseNow();
    var keys = [];
    var byKey = {};
    var start = Infinity;
    var shown = 0;
    log.forEach(function (entry) {
      var mode = entry.mode ? String(entry.mode).toLowerCase() : '';
      if (!matches(filter, entry.key, mode)) {
        return;
      }
      var from = parseInstant(entry.acquiredAt);
      var to = entry.endedAt ? parseInstant(entry.endedAt) : NaN;
      if (isNaN(from)) {
        return;
      }
      shown++;
      start = Math.min(start, from);
      now = Math.max(now, from, isNaN(to) ? from : to);
      if (!byKey[entry.key]) {
        byKey[entry.key] = [];
        keys.push(entry.key);
      }
      byKey[entry.key].push({ entry: entry, from: from, to: to });
    });
    var timeline = byId('log-timeline');
    var fragment = document.createDocumentFragment();
    var span = Math.max(now - start, 1);
    keys.forEach(function (key) {
      var row = document.createElement('div');
      row.className = 'track-row';
      row.setAttribute('role', 'listitem');
      row.dataset.key = key;
      var label = document.createElement('div');
      label.className = 'track-key mono';
      label.textContent = key;
      label.title = key;
      row.appendChild(label);
      var track = document.createElement('div');
      track.className = 'track';
      byKey[key].forEach(function (hold) {
        var entry = hold.entry;
        var outcome = entry.outcome ? String(entry.outcome).toLowerCase() : 'held';
        var end = isNaN(hold.to) ? now : hold.to;
        var bar = document.createElement('div');
        bar.className = 'hold outcome-' + outcome;
        bar.dataset.outcome = outcome;
        bar.dataset.owner = entry.owner;
        bar.dataset.token = (entry.token === null || entry.token === undefined) ? '' : String(entry.token);
        bar.dataset.mode = entry.mode;
        // positioned through the CSSOM, which the page's Content-Security-Policy allows
        bar.style.left = ((hold.from - start) / span * 100) + '%';
        bar.style.width = Math.max((end - hold.from) / span * 100, 0.4) + '%';
        bar.title = outcome + ' · ' + entry.mode + ' · ' + formatTime(hold.from) + ' → '
          + (isNaN(hold.to) ? 'now' : formatTime(hold.to)) + ' (' + formatDuration(end - hold.from) + ')\n'
          + 'owner ' + entry.owner + (bar.dataset.token ? '\ntoken ' + bar.dataset.token : '');
        track.appendChild(bar);
      });
      row.appendChild(track);
      fragment.appendChild(row);
    });
    timeline.replaceChildren(fragment);
    if (shown === 0) {
      var empty = document.createElement('p');
      empty.className = 'empty-log';
      empty.textContent = log.length ? 'No hold matches the filters.' : 'No hold logged yet.';
      timeline.appendChild(empty);
    }
    byId('log-span').textContent = shown ? formatTime(start) + ' → ' + formatTime(now) : '';
    byId('log-count').textContent = countText(shown, log.length);
  }

  function renderMigrations(report) {
    var migrations = report.migrations || [];
    var tbody = byId('migrations').tBodies[0];
    var fragment = document.createDocumentFragment();
    var states = {};
    migrations.forEach(function (migration) {
      states[migration.state] = (states[migration.state] || 0) + 1;
      var tr = document.createElement('tr');
      cell(tr, migration.version, 'num');
      cell(tr, migration.description);
      cell(tr, migration.state, 'state');
      cell(tr, migration.installedOn ? formatTime(parseInstant(migration.installedOn)) : '', null,
        migration.installedOn);
      fragment.appendChild(tr);
    });
    tbody.replaceChildren(fragment);
    if (!migrations.length) {
      emptyRow(tbody, 4, 'Not listed (db-lock.schema.migrate is off, or the schema is managed elsewhere).');
    }
    byId('migrations-summary').textContent = migrations.length
      ? '(' + Object.keys(states).map(function (s) { return states[s] + ' ' + s.toLowerCase(); }).join(', ') + ')'
      : '';
  }

  function render() {
    var snapshot = state.snapshot;
    if (!snapshot) {
      return;
    }
    var report = snapshot.report || {};
    var heldModes = {};
    var modes = [];
    (report.heldHere || []).forEach(function (item) {
      heldModes[item.key] = item.mode;
      modes.push(item.mode);
    });
    (report.rows || []).forEach(function (row) {
      modes.push(row.mode);
    });
    (report.waitingHere || []).forEach(function (item) {
      modes.push(item.mode);
    });
    addModeOptions(modes);
    var filter = filters();
    renderLocks(report, heldModes, filter, snapshot.releaseAllowed === true);
    renderHeld(report, filter);
    renderWaiting(report, filter);
    renderLog(report, filter);
    renderMigrations(report);
    tick();
  }

  /* Moves the countdowns and the held-for times on, between two reads. */
  function tick() {
    if (!state.snapshot) {
      return;
    }
    var now = databaseNow();
    byId('clock').textContent = formatTime(now);
    Array.prototype.forEach.call(document.querySelectorAll('#locks td.time-left'), function (td) {
      var remaining = Math.round(+td.dataset.expiresAt - now);
      td.dataset.remainingMs = String(remaining);
      td.textContent = (remaining > 0) ? formatDuration(remaining) : 'expired';
      td.classList.toggle('expired', remaining <= 0);
      td.classList.toggle('ending', remaining > 0 && remaining < 5000);
    });
    var elapsed = performance.now() - state.fetchedAt;
    Array.prototype.forEach.call(document.querySelectorAll('#held td.held-for'), function (td) {
      td.textContent = formatDuration(+td.dataset.heldFor + elapsed);
    });
  }

  function setStatus(kind, text) {
    var status = byId('status');
    status.dataset.state = kind;
    status.textContent = text;
  }

  function schedule() {
    clearTimeout(state.timer);
    state.timer = setTimeout(refresh, state.refreshMillis);
  }

  function refresh() {
    var sequence = ++state.sequence;
    var sentAt = performance.now();
    return fetch(base + '/api/locks', {
      headers: { 'Accept': 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
      credentials: 'same-origin',
      cache: 'no-store'
    }).then(function (response) {
      if (!response.ok) {
        throw new Error((response.status === 401 || response.status === 403)
          ? 'HTTP ' + response.status + ': sign in again' : 'HTTP ' + response.status);
      }
      return response.json();
    }).then(function (snapshot) {
      if (sequence !== state.sequence) {
        return;
      }
      var receivedAt = performance.now();
      state.snapshot = snapshot;
      // the database's clock was read during the request: take it as read half-way
      state.clockMs = parseInstant(snapshot.clock && snapshot.clock.now);
      state.fetchedAt = (sentAt + receivedAt) / 2;
      state.refreshMillis = snapshot.refreshMillis || state.refreshMillis;
      byId('refresh-every').textContent = formatDuration(state.refreshMillis);
      byId('clock').title = (snapshot.clock && snapshot.clock.source === 'database')
        ? 'the database\'s clock, which leases run on' : 'this application\'s clock (the database\'s cannot be read)';
      setStatus('live', 'live');
      render();
    }).catch(function (error) {
      if (sequence === state.sequence) {
        setStatus('error', error.message || 'unreachable');
      }
    }).then(function () {
      if (sequence === state.sequence) {
        schedule();
      }
    });
  }

  function notice(kind, text) {
    var element = byId('notice');
    element.dataset.kind = kind;
    element.textContent = text;
    element.hidden = false;
    clearTimeout(state.noticeTimer);
    state.noticeTimer = setTimeout(function () {
      element.hidden = true;
    }, 8000);
  }

  function openRelease(lock) {
    state.pending = lock;
    byId('confirm-key').textContent = lock.key;
    byId('confirm-owner').textContent = lock.owner;
    byId('confirm-token').textContent = String(lock.token);
    byId('confirm-release').showModal();
  }

  function release(lock) {
    var headers = {
      'Accept': 'application/json',
      'Content-Type': 'application/x-www-form-urlencoded;charset=UTF-8',
      'X-Requested-With': 'XMLHttpRequest'
    };
    var token = csrf();
    if (token) {
      headers[token.header] = token.token;
    }
    var body = new URLSearchParams();
    body.set('key', lock.key);
    body.set('owner', lock.owner);
    body.set('token', String(lock.token));
    return fetch(base + '/api/release', { method: 'POST', headers: headers, body: body, credentials: 'same-origin' })
      .then(function (response) {
        return response.json().catch(function () {
          return {};
        }).then(function (answer) {
          if (response.ok && answer.released) {
            notice('ok', 'Released ' + lock.key + ' (owner ' + lock.owner + ', token ' + lock.token + ').');
          }
          else if (response.ok) {
            notice('warning', 'Not released: ' + lock.key + ' no longer has owner ' + lock.owner + ' and token '
              + lock.token + ' (released, expired or taken over since).');
          }
          else {
            notice('error', 'Not released: ' + (answer.error || 'HTTP ' + response.status) + '.');
          }
        });
      }, function (error) {
        notice('error', 'Not released: ' + error.message + '.');
      })
      .then(refresh);
  }

  document.addEventListener('DOMContentLoaded', function () {
    byId('filter-name').addEventListener('input', render);
    byId('filter-mode').addEventListener('change', render);
    byId('confirm-cancel').addEventListener('click', function () {
      state.pending = null;
      byId('confirm-release').close();
    });
    byId('confirm-ok').addEventListener('click', function () {
      var lock = state.pending;
      state.pending = null;
      byId('confirm-release').close();
      if (lock) {
        release(lock);
      }
    });
    setInterval(tick, 200);
    refresh();
  });
}());
