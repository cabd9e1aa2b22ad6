// kmigrate HTML report: sort and filter its tables.
//
// Progressive enhancement: without this script the report is complete (file sections
// collapsed, anchors, table of contents). With it, the filter bar shows, table headers
// become buttons that sort, and the view is kept in location.hash so that a filtered,
// sorted view is a link a team can share, e.g.
//   report.html#rule=KM201&fix=manual&folder=pkg%2Fimage&sort=-files.manual
// Keys: rule, severity, fix, context, folder (that folder and below), q (text),
// sort (<table>.<column>, a leading "-" for descending; tables: rules, files, findings).
//
// The page's Content-Security-Policy allows this one script by its hash and nothing
// else. It never builds markup from strings: it reads data-* attributes and text, and
// only toggles `hidden`, `open`, `aria-sort` and the order of rows. Each update is one
// pass over the rows (no layout is read), so a 1,000-file report stays quick.
"use strict";

(() => {
  const FILTERS = ["rule", "severity", "fix", "context", "folder", "q"];
  const PER_FINDING = ["rule", "severity", "fix", "context"];
  const bar = document.getElementById("filters");
  if (!bar) return;

  // -- the data, read once ---------------------------------------------------------
  const sections = [...document.querySelectorAll("details[data-folder]")];
  const findings = [];
  const shownIn = new Map();
  for (const section of sections) {
    const path = section.dataset.path.toLowerCase();
    shownIn.set(section.id, 0);
    for (const row of section.querySelectorAll("tr[data-rule]")) {
      findings.push({
        row,
        section,
        folder: section.dataset.folder,
        rule: row.dataset.rule,
        severity: row.dataset.severity,
        fix: row.dataset.fix,
        context: row.dataset.context,
        path,
        text: null, // read on the first text search
      });
    }
  }
  const fileRows = [...document.querySelectorAll("tr[data-folder]")].map((row) => ({
    row,
    section: row.dataset.section || "",
    folder: row.dataset.folder,
    path: row.cells[0].textContent.toLowerCase(),
  }));
  const controls = new Map(FILTERS.map((key) => [key, bar.querySelector(`[name="${key}"]`)]));
  const count = document.getElementById("filter-count");

  // -- state <-> location.hash -----------------------------------------------------
  function isState(hash) {
    // "#f12" or "#files" is an anchor, not a view: it leaves the view as it is
    return hash === "" || hash === "#" || hash.includes("=");
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const state = { sort: params.get("sort") || "" };
    for (const key of FILTERS) state[key] = params.get(key) || "";
    return state;
  }

  function hashOf(state) {
    const params = new URLSearchParams();
    for (const key of [...FILTERS, "sort"]) if (state[key]) params.set(key, state[key]);
    return "#" + params.toString();
  }

  let current = readHash();

  function update(state) {
    current = state;
    const hash = hashOf(state);
    if (location.hash !== hash && !(hash === "#" && location.hash === "")) {
      location.replace(hash); // no history entry per keystroke; hashchange sees it is current
    }
    show(state);
  }

  // -- filtering ---------------------------------------------------------------------
  function inFolder(folder, wanted) {
    return !wanted || folder === wanted || (wanted !== "." && folder.startsWith(wanted + "/"));
  }

  function matches(item, state, query) {
    for (const key of PER_FINDING) if (state[key] && item[key] !== state[key]) return false;
    if (!inFolder(item.folder, state.folder)) return false;
    if (!query) return true;
    if (item.text === null) item.text = item.path + "\n" + item.row.textContent.toLowerCase();
    return item.text.includes(query);
  }

  function setHidden(element, hidden) {
    if (element.hidden !== hidden) element.hidden = hidden;
  }

  let filtered = false; // whether any row was hidden since the page loaded

  function filter(state) {
    const query = state.q.trim().toLowerCase();
    const active = FILTERS.some((key) => state[key]);
    if (!active && !filtered) return counted(0, 0, false); // the page as written
    filtered = true;
    for (const id of shownIn.keys()) shownIn.set(id, 0);
    let shown = 0;
    for (const item of findings) {
      const ok = matches(item, state, query);
      setHidden(item.row, !ok);
      if (ok) {
        shown += 1;
        shownIn.set(item.section.id, shownIn.get(item.section.id) + 1);
      }
    }
    let files = 0;
    for (const section of sections) {
      const visible = shownIn.get(section.id) > 0;
      files += visible;
      setHidden(section, !visible);
      // a filtered view opens what it shows; clearing the filter closes what it opened
      if (active && visible && !section.open) {
        section.open = true;
        section.dataset.opened = "1";
      } else if (!active && section.dataset.opened) {
        section.open = false;
        delete section.dataset.opened;
      }
    }
    const perFinding = PER_FINDING.some((key) => state[key]);
    for (const item of fileRows) {
      const visible = item.section
        ? shownIn.get(item.section) > 0
        : !perFinding && inFolder(item.folder, state.folder) && item.path.includes(query);
      setHidden(item.row, !visible);
    }
    counted(shown, files, active);
  }

  function counted(shown, files, active) {
    count.textContent = active
      ? `showing ${shown} of ${findings.length} findings (${files} of ${sections.length} files)`
      : `showing all ${findings.length} findings (${sections.length} files)`;
  }

  // -- sorting -------------------------------------------------------------------------
  let collator = null; // made on the first text sort: making one costs more than a sort
  const original = new WeakMap(); // table body -> its rows in the order the report wrote them
  let sorted = "";
  let sortedHeaders = [];

  function sortKey(cell) {
    const text = cell.dataset.v !== undefined ? cell.dataset.v : cell.textContent.trim();
    const number = text === "" ? NaN : Number(text);
    return { text, number };
  }

  function compare(a, b) {
    // numbers as numbers; text numeric-aware ("9:1" before "10:1")
    if (!Number.isNaN(a.number) && !Number.isNaN(b.number)) return a.number - b.number;
    collator ||= new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
    return collator.compare(a.text, b.text);
  }

  function place(body, rows) {
    const moved = document.createDocumentFragment();
    moved.append(...rows);
    body.append(moved); // one move of all rows, no layout read in between
  }

  function sortBody(body, column, descending) {
    if (!original.has(body)) original.set(body, [...body.rows]);
    const keyed = original.get(body).map((row, index) => ({
      row,
      index,
      key: sortKey(row.cells[column]),
    }));
    keyed.sort((a, b) => {
      const empty = (a.key.text === "") - (b.key.text === ""); // n/a last, either way
      if (empty) return empty;
      const order = compare(a.key, b.key);
      return (descending ? -order : order) || a.index - b.index; // stable
    });
    place(body, keyed.map((item) => item.row));
  }

  function sort(spec) {
    if (spec === sorted) return;
    sorted = spec;
    for (const th of sortedHeaders) {
      th.removeAttribute("aria-sort");
      const body = th.closest("table").tBodies[0];
      place(body, original.get(body)); // back to the report's order
    }
    const descending = spec.startsWith("-");
    const [name, key] = spec.replace(/^-/, "").split(".");
    const header = `th[data-key="${CSS.escape(key || "")}"]`;
    const selector = `table[data-table="${CSS.escape(name)}"] > thead ${header}`;
    sortedHeaders = spec ? [...document.querySelectorAll(selector)] : [];
    for (const th of sortedHeaders) {
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      sortBody(th.closest("table").tBodies[0], th.cellIndex, descending);
    }
  }

  function clicked(th) {
    const spec = `${th.closest("table").dataset.table}.${th.dataset.key}`;
    const numeric = th.classList.contains("n");
    let next;
    if (current.sort === spec) next = "-" + spec;
    else if (current.sort === "-" + spec) next = spec;
    else next = numeric ? "-" + spec : spec; // counts and scores: largest first
    update({ ...current, sort: next });
  }

  // headers become buttons: reachable by keyboard, announced as such, one listener for all
  for (const th of document.querySelectorAll("table[data-table] th[data-key]")) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = th.textContent;
    th.replaceChildren(button);
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("table[data-table] th[data-key] > button");
    if (button) clicked(button.parentElement);
  });

  // -- wiring --------------------------------------------------------------------------
  function show(state) {
    for (const [key, control] of controls) {
      if (control.value === state[key]) continue;
      control.value = state[key];
      if (control.value !== state[key]) {
        // a shared link naming a value this report does not hold: show it, match nothing
        const option = document.createElement("option");
        option.value = state[key];
        option.textContent = `${state[key]} (not in this report)`;
        control.append(option);
        control.value = state[key];
      }
    }
    filter(state);
    sort(state.sort);
  }

  function fromControls() {
    const state = { sort: current.sort };
    for (const [key, control] of controls) state[key] = control.value;
    return state;
  }

  bar.addEventListener("input", () => update(fromControls()));
  bar.addEventListener("change", () => update(fromControls()));
  document.getElementById("filter-clear").addEventListener("click", () => {
    update({ ...Object.fromEntries(FILTERS.map((key) => [key, ""])), sort: current.sort });
  });
  window.addEventListener("hashchange", () => {
    if (!isState(location.hash) || location.hash === hashOf(current)) return;
    current = readHash();
    show(current);
  });

  bar.hidden = false;
  show(current);
})();
