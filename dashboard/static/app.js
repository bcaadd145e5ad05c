// The trawl dashboard: polls /v1/stats once a second, keeps the last
// samples in a ring for the charts and the rates, and calls the crawl
// routes to pause and resume. It polls /v1/nodes with it: the fleet's
// members, shown only when the node is a member of one. Everything the server says is put into the
// page as text (textContent), never as HTML: host names come from the web.
//
// The API token is kept in localStorage: it comes from a #token=... link
// (the fragment never reaches the server, and is removed from the address
// bar at once) or from the token field, and is only ever sent in the
// Authorization header of a pause or resume.
'use strict';

(() => {
  const POLL_MS = 1000;
  const RING = 120; // samples kept: two minutes at one a second
  // Every rate the page shows (the tiles, each point of the charts, the
  // crawls' pages/s) is over the same window: from the newest sample at
  // least RATE_WINDOW_S older than the one it is shown for, to that one;
  // none ('–', a gap) before the page has samples that far apart. So a
  // chart's last point is the tile's figure.
  const RATE_WINDOW_S = 5;
  const TOKEN_KEY = 'trawl.token';
  const PARTITIONS = 256; // a fleet's partitions when /v1/nodes does not say (internal/partition.Count)

  const $ = (id) => document.getElementById(id);
  const ring = []; // samples, oldest first
  const rows = new Map(); // crawl id -> its row's parts
  let timer = 0;
  let polling = false;

  // --- formatting -------------------------------------------------------

  const intFmt = new Intl.NumberFormat('en');
  const int = (n) => intFmt.format(Math.round(n));
  const rate = (r) => (r == null ? '–' : r < 10 ? r.toFixed(2) : r < 100 ? r.toFixed(1) : int(r));
  const pct = (f) => (f * 100).toFixed(f < 0.1 ? 2 : 1) + '%';
  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }
  function duration(s) {
    s = Math.floor(s);
    const d = Math.floor(s / 86400);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    if (d > 0) return `${d}d ${h % 24}h`; // a continuous crawl's mean age, a long uptime
    return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${s % 60}s` : `${s}s`;
  }
  function text(id, v) {
    const el = $(id);
    if (el.textContent !== v) el.textContent = v;
  }
  function say(msg, bad) {
    const el = $('message');
    el.textContent = msg;
    el.className = bad ? 'bad' : 'ok';
  }

  // --- the token --------------------------------------------------------

  function token() {
    return localStorage.getItem(TOKEN_KEY) || '';
  }
  function showToken() {
    text('token-state', token() ? 'token saved in this browser' : 'no token: pause and resume need one');
  }
  function takeTokenFromFragment() {
    const m = /^#token=([^&]+)/.exec(location.hash);
    if (m) localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  }

  // --- samples and rates ------------------------------------------------

  // sample keeps what the charts and rates need of one /v1/stats answer.
  function sample(s) {
    const errors =
      Object.values(s.errors_by_class).reduce((a, b) => a + b, 0) +
      (s.status_by_class['4xx'] || 0) +
      (s.status_by_class['5xx'] || 0);
    const crawls = new Map(s.crawls.map((c) => [c.id, c.pages]));
    return { t: s.uptime_s, fetched: s.totals.fetched, errors, queued: s.frontier.queued, backoff: s.hosts.backoff, crawls };
  }

  // perSecond is the rate of get() between samples a and b, or null if
  // there is no time between them or the counter went back (a restart).
  function perSecond(a, b, get) {
    const dt = b.t - a.t;
    const dv = get(b) - get(a);
    return dt > 0 && dv >= 0 ? dv / dt : null;
  }
  // windowStart is the index of the sample the rate window ending at
  // sample i starts from: the newest at least RATE_WINDOW_S older than
  // ring[i], or -1 if there is none. (A poll may come early, after a
  // click: samples are not a fixed time apart, so the window is in
  // seconds, not samples.)
  function windowStart(i) {
    for (let j = i - 1; j >= 0; j--) {
      if (ring[i].t - ring[j].t >= RATE_WINDOW_S) return j;
    }
    return -1;
  }
  // windowRate is the rate of get() over the window ending at sample i.
  function windowRate(i, get) {
    const j = windowStart(i);
    return j < 0 ? null : perSecond(ring[j], ring[i], get);
  }
  function recentRate(get) {
    return windowRate(ring.length - 1, get);
  }
  function series(get) {
    return ring.map(get);
  }
  function rateSeries(get) {
    return ring.map((_, i) => windowRate(i, get));
  }

  // --- charts -----------------------------------------------------------

  // chart draws values (oldest first, null for a gap) right-aligned over
  // RING slots, in the canvas's CSS color, with the top of its scale.
  function chart(id, values, fmt) {
    const canvas = $(id);
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const style = getComputedStyle(canvas);
    const finite = values.filter((v) => v != null && isFinite(v));
    const peak = Math.max(...finite, 0);
    const top = peak > 0 ? peak * 1.15 : 1;
    const step = w / (RING - 1);
    const x = (i) => w - (values.length - 1 - i) * step;
    const y = (v) => h - 2 - (v / top) * (h - 16);

    g.strokeStyle = style.borderTopColor;
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(0, h - 1.5);
    g.lineTo(w, h - 1.5);
    g.stroke();

    g.strokeStyle = style.color;
    g.fillStyle = style.color;
    g.lineWidth = 1.5;
    let path = null;
    const close = () => {
      if (!path) return;
      g.stroke();
      g.globalAlpha = 0.15;
      g.lineTo(path.last, h - 2);
      g.lineTo(path.first, h - 2);
      g.fill();
      g.globalAlpha = 1;
      path = null;
    };
    values.forEach((v, i) => {
      if (v == null || !isFinite(v)) {
        close();
        return;
      }
      if (!path) {
        g.beginPath();
        g.moveTo(x(i), y(v));
        path = { first: x(i), last: x(i) };
      } else {
        g.lineTo(x(i), y(v));
        path.last = x(i);
      }
    });
    close();

    g.fillStyle = style.getPropertyValue('--muted').trim() || style.color;
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'top';
    g.fillText('max ' + fmt(peak), 4, 2);
  }

  // --- tables -----------------------------------------------------------

  // fill replaces tbody's rows with one per item, each cell's text from
  // cells(item); numeric columns (numeric[i]) are right-aligned.
  function fill(tbody, items, cells, numeric, empty) {
    const frag = document.createDocumentFragment();
    if (items.length === 0) {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      td.colSpan = numeric.length;
      td.className = 'empty';
      td.textContent = empty;
      tr.append(td);
      frag.append(tr);
    }
    for (const it of items) {
      const tr = document.createElement('tr');
      cells(it).forEach((v, i) => {
        const td = document.createElement('td');
        td.textContent = v;
        if (numeric[i]) td.className = 'n';
        tr.append(td);
      });
      frag.append(tr);
    }
    tbody.replaceChildren(frag);
  }

  // crawlRow returns the row of crawl id, made once and updated in place
  // after, so that a button keeps its identity between polls.
  function crawlRow(id) {
    let r = rows.get(id);
    if (r) return r;
    const tr = document.createElement('tr');
    tr.dataset.crawl = String(id);
    const td = (cls) => {
      const el = document.createElement('td');
      if (cls) el.className = cls;
      tr.append(el);
      return el;
    };
    r = {
      tr,
      id: td(),
      name: td(),
      state: td('state'),
      pages: td('n'),
      rate: td('n'),
      queued: td('n'),
      inFlight: td('n'),
      errors: td('n'),
      progress: td('progress'),
      action: td(),
    };
    r.bar = document.createElement('progress');
    r.label = document.createElement('span');
    r.progress.append(r.bar, r.label);
    r.button = document.createElement('button');
    r.button.type = 'button';
    r.button.dataset.crawl = String(id);
    r.button.addEventListener('click', () => act(id, r.button.dataset.action, r.button));
    r.action.append(r.button);
    rows.set(id, r);
    return r;
  }

  function showCrawls(crawls) {
    const tbody = $('crawls');
    const seen = new Set();
    for (const c of crawls) {
      seen.add(c.id);
      const r = crawlRow(c.id);
      r.id.textContent = String(c.id);
      r.name.textContent = c.name || '';
      r.state.textContent = c.stop_reason
        ? `${c.state} (${c.stop_reason})`
        : c.waiting_for_recrawls
          ? `${c.state} (waiting for recrawls)`
          : c.waiting
            ? `${c.state} (${c.waiting.text})`
            : c.state;
      r.tr.dataset.state = c.state;
      r.pages.textContent = int(c.pages);
      r.rate.textContent = rate(recentRate((s) => s.crawls.get(c.id) ?? 0));
      r.queued.textContent = int(c.queued);
      r.inFlight.textContent = int(c.in_flight);
      r.errors.textContent = int(c.errors);
      if (c.max_pages > 0) {
        r.bar.max = c.max_pages;
        r.bar.value = Math.min(c.pages, c.max_pages);
        r.label.textContent = ` ${int(c.pages)} of ${int(c.max_pages)} pages`;
      } else {
        const settled = Math.max(0, c.discovered - c.queued - c.in_flight - c.held);
        r.bar.max = Math.max(1, c.discovered);
        r.bar.value = Math.min(settled, r.bar.max);
        r.label.textContent = ` ${int(settled)} of ${int(c.discovered)} URLs found so far`;
      }
      const action = c.state === 'running' ? 'pause' : c.state === 'paused' ? 'resume' : '';
      r.button.hidden = action === '';
      if (r.button.dataset.action !== action) {
        r.button.dataset.action = action;
        r.button.textContent = action === 'pause' ? 'Pause' : 'Resume';
      }
      if (r.tr.parentNode !== tbody) tbody.append(r.tr);
    }
    for (const [id, r] of rows) {
      if (!seen.has(id)) {
        r.tr.remove();
        rows.delete(id);
      }
    }
    $('crawls-empty')?.remove();
    if (crawls.length === 0) {
      const tr = document.createElement('tr');
      tr.id = 'crawls-empty';
      const td = document.createElement('td');
      td.colSpan = 10;
      td.className = 'empty';
      td.textContent = 'no crawls yet: POST /v1/crawls, or trawl crawls create';
      tr.append(td);
      tbody.append(tr);
    }
  }

  // showRecrawls fills the continuous crawls' table (hidden while there is
  // none): their recrawl counts, and the schedule's figures once it has
  // scanned ('–' before).
  function showRecrawls(crawls) {
    $('recrawl-section').hidden = crawls.length === 0;
    const phase = (c) => (c.state !== 'running' ? c.state : c.waiting_for_recrawls ? 'waiting for recrawls' : 'crawling');
    const gauge = (f, get) => (f ? get(f) : '–');
    fill(
      $('recrawl'),
      crawls,
      (c) => {
        const f = c.freshness;
        return [
          String(c.id),
          c.name || '',
          phase(c),
          int(c.recrawls),
          int(c.not_modified),
          int(c.changed),
          gauge(f, (x) => int(x.scheduled)),
          gauge(f, (x) => int(x.due)),
          gauge(f, (x) => int(x.overdue)),
          gauge(f, (x) => pct(x.freshness)),
          gauge(f, (x) => duration(x.mean_age_s)),
        ];
      },
      [false, false, false, true, true, true, true, true, true, true, true],
      '',
    );
  }

  // showDuplicates fills the two duplicate tiles: content duplicates
  // (pages fetched whose content was archived already, exact or near),
  // and links to URLs already seen, which cost nothing (no request).
  function showDuplicates(d) {
    text('dup-content-rate', pct(d.content_rate));
    text('dup-exact', int(d.exact_pages));
    text('dup-near', int(d.near_pages));
    text('url-seen-rate', pct(d.url_rate));
    text('shared-rate', pct(d.shared_rate));
  }

  // --- the fleet --------------------------------------------------------

  // dashboardLink is a link to a member's own dashboard at the API address
  // it published, or its text alone if that is not an http(s) address.
  function dashboardLink(api) {
    let u = null;
    try {
      u = new URL(api);
    } catch {
      return document.createTextNode(api || '–');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return document.createTextNode(api);
    const a = document.createElement('a');
    a.href = new URL('/', u).href;
    a.textContent = u.host;
    return a;
  }

  // showFleet fills the fleet's panel from a /v1/nodes answer, or hides it
  // when the node is on its own.
  function showFleet(v) {
    document.body.dataset.fleet = String(!!v.fleet);
    $('fleet-section').hidden = !v.fleet;
    if (!v.fleet) return;
    const members = [...(v.nodes || [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const owned = new Set();
    let owns = 0;
    const frag = document.createDocumentFragment();
    for (const m of members) {
      const ps = m.owns || []; // a member that owns nothing may say null
      for (const p of ps) owned.add(p);
      owns += ps.length;
      const tr = document.createElement('tr');
      tr.dataset.member = m.name;
      if (m.name === v.self) tr.dataset.self = '';
      if (m.leaving) tr.dataset.leaving = '';
      const td = (cls, content) => {
        const el = document.createElement('td');
        if (cls) el.className = cls;
        el.append(content);
        tr.append(el);
      };
      td('member', m.name + (m.name === v.self ? ' (this page)' : ''));
      td('state', m.leaving ? 'leaving' : 'member');
      td('n', int(ps.length));
      td('', dashboardLink(m.info && m.info.api));
      frag.append(tr);
    }
    if (members.length === 0) {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      td.colSpan = 4;
      td.className = 'empty';
      td.textContent = 'no members seen yet';
      tr.append(td);
      frag.append(tr);
    }
    $('fleet').replaceChildren(frag);

    const total = v.partitions || PARTITIONS;
    const moving = owned.size !== total || owns !== owned.size;
    const of = owned.size !== total ? ` of ${int(total)}` : '';
    let sum = `${int(members.length)} member${members.length === 1 ? '' : 's'}, ${int(owned.size)}${of} partitions owned`;
    if (owns !== owned.size) sum += `, ${int(owns - owned.size)} owned twice`;
    if (moving) sum += ': partitions are moving';
    text('fleet-summary', sum);
    $('fleet-summary').className = moving ? 'warn' : '';
  }

  // --- actions ----------------------------------------------------------

  async function act(id, action, button) {
    if (!action) return;
    const t = token();
    if (!t) {
      say('Pause and resume need the API token: paste it above (trawl serve prints a link with it).', true);
      $('token').focus();
      return;
    }
    button.disabled = true;
    try {
      const resp = await fetch(`/v1/crawls/${id}/${action}`, {
        method: 'POST',
        headers: { Authorization: 'Bearer ' + t },
        cache: 'no-store',
        signal: AbortSignal.timeout(10000),
      });
      const body = await resp.json().catch(() => ({}));
      if (resp.ok) {
        say(`crawl ${id} is ${body.state}`, false);
      } else {
        const why = (body.error && body.error.message) || resp.statusText;
        say(`${action} crawl ${id}: ${resp.status}: ${why}`, true);
      }
    } catch (e) {
      say(`${action} crawl ${id}: ${e.message}`, true);
    } finally {
      button.disabled = false;
      poll();
    }
  }

  // --- polling ----------------------------------------------------------

  function show(s) {
    const last = ring[ring.length - 1];
    if (last && s.uptime_s < last.t) ring.length = 0; // the server restarted
    ring.push(sample(s));
    if (ring.length > RING) ring.shift();
    document.body.dataset.samples = String(ring.length);

    const t = s.totals;
    const now = ring[ring.length - 1];
    const pagesRates = rateSeries((x) => x.fetched);
    text('pages-rate', rate(pagesRates[pagesRates.length - 1]));
    // The samples the figure is from (uptime_s), for a reader to check it.
    const rateEl = $('pages-rate');
    rateEl.dataset.t = String(now.t);
    const from = windowStart(ring.length - 1);
    rateEl.dataset.from = from < 0 ? '' : String(ring[from].t);
    text('pages-total', int(t.fetched));
    text('bytes-total', `${bytes(t.bytes)}; ${int(t.pages)} pages to crawls`);
    text('requests-total', int(t.requests));
    text('errors-total', int(now.errors));
    text('queued', int(s.frontier.queued));
    text('in-flight', int(s.frontier.in_flight));
    text('hosts-backoff', int(s.hosts.backoff));
    text('hosts-active', int(s.hosts.active));
    text('hosts-waiting', int(s.hosts.waiting));
    text('hosts-known', int(s.hosts.known));
    showDuplicates(s.duplicates);

    const errorRates = rateSeries((x) => x.errors);
    chart('chart-pages', pagesRates, rate);
    chart('chart-errors', errorRates, rate);
    chart('chart-frontier', series((x) => x.queued), int);
    chart('chart-backoff', series((x) => x.backoff), int);
    text('chart-pages-now', rate(pagesRates[pagesRates.length - 1]));
    text('chart-errors-now', rate(errorRates[errorRates.length - 1]));
    text('chart-frontier-now', int(now.queued));
    text('chart-backoff-now', int(now.backoff));

    showCrawls(s.crawls);
    showRecrawls(s.crawls.filter((c) => c.continuous));

    const errs = Object.entries(s.errors_by_class).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const cls of ['4xx', '5xx']) {
      if (s.status_by_class[cls]) errs.push([`${cls} responses`, s.status_by_class[cls]]);
    }
    if (t.robots_disallowed) errs.push(['disallowed by robots.txt', t.robots_disallowed]);
    fill($('errors'), errs, ([k, v]) => [k, int(v)], [false, true], 'none');
    fill($('busiest'), s.busiest_hosts, (h) => [h.host, rate(h.requests_per_min)], [false, true], 'no requests in the last minute');
    fill($('slowest'), s.slowest_hosts, (h) => [h.host, `${rate(h.mean_ms)} ms`, int(h.samples)], [false, true, true], 'no responses in the last minute');

    const st = $('status');
    st.textContent = `updated ${new Date(s.time).toLocaleTimeString()} · API up ${duration(s.uptime_s)}`;
    st.className = 'ok';
    if (s.node_paused) {
      st.textContent += ' · the node is paused: nothing is fetched (POST /v1/node/resume)';
      st.className = 'warn';
    }
  }

  // pollStats fetches /v1/stats and shows it; the status line says what
  // went wrong if it cannot.
  async function pollStats() {
    try {
      const resp = await fetch('/v1/stats', { cache: 'no-store', signal: AbortSignal.timeout(5000) });
      if (resp.status === 503) {
        $('status').textContent = 'the node is loading its state…';
        $('status').className = 'warn';
      } else if (!resp.ok) {
        throw new Error(`${resp.status} ${resp.statusText}`);
      } else {
        show(await resp.json());
      }
    } catch (e) {
      $('status').textContent = `cannot reach trawl serve: ${e.message}`;
      $('status').className = 'bad';
    }
  }

  // pollNodes fetches /v1/nodes and shows the fleet; if it cannot, the
  // panel keeps its last rows and its summary says why (a node on its own
  // keeps the panel hidden), and the rest of the page goes on.
  async function pollNodes() {
    try {
      const resp = await fetch('/v1/nodes', { cache: 'no-store', signal: AbortSignal.timeout(5000) });
      if (resp.status === 503) return; // the node is loading its state: the status line says so
      if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
      showFleet(await resp.json());
    } catch (e) {
      text('fleet-summary', `cannot read the fleet's members (/v1/nodes): ${e.message}`);
      $('fleet-summary').className = 'bad';
    }
  }

  async function poll() {
    clearTimeout(timer);
    if (polling) return; // the poll under way schedules the next
    polling = true;
    try {
      await Promise.all([pollStats(), pollNodes()]);
    } finally {
      polling = false;
      timer = setTimeout(poll, POLL_MS);
    }
  }

  // --- start ------------------------------------------------------------

  takeTokenFromFragment();
  showToken();
  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = $('token').value.trim();
    if (v) localStorage.setItem(TOKEN_KEY, v);
    $('token').value = '';
    showToken();
  });
  $('token-forget').addEventListener('click', () => {
    localStorage.removeItem(TOKEN_KEY);
    showToken();
  });
  poll();
})();
