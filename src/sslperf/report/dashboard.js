// sslperf's report pages: draws the charts embedded in the page as JSON with
// Plotly, in the view the toolbar chooses. Every statistic (medians, CIs,
// ratios, p, verdicts) was computed by sslperf; this only picks and draws.
// The view can be set in the address too: #view=absolute&metric=cpu&base=LIB&order=date&hide=A,B
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("sslperf-data").textContent);
  const charts = data.charts;
  if (typeof Plotly === "undefined") {
    // The page was opened without the directory it was written in: its tables still read, the charts cannot.
    for (const chart of charts) {
      const el = document.getElementById(chart.id);
      el.innerHTML = `<p class="na">This chart needs ${data.plotly_file}, written beside this page in its report ` +
                     "directory: open the page from that directory (or copy the directory, not the page alone).</p>";
      el.dataset.drawn = "no-plotly";
    }
    return;
  }
  const seriesKeys = [...new Set(charts.flatMap(c => (c.series || []).map(s => s.key)))];
  const metrics = [...new Set(charts.flatMap(c => c.metrics))];
  const state = {view: data.default_view || "relative", metric: metrics[0], base: data.baseline || seriesKeys[0],
                 order: "version", hidden: new Set()};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    let key, value;
    try { [key, value] = part.split("=").map(decodeURIComponent); } catch (e) { continue; }   // a stray %
    if (!value) continue;
    if (key === "hide") value.split(",").forEach(v => state.hidden.add(v));
    else if (["view", "metric", "base", "order"].includes(key)) state[key] = value;
  }
  const esc = text => String(text).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                                                             "'": "&#39;"})[c]);
  // Okabe–Ito (report/palette.py): colour-blind safe; verdicts also carry ▲ ▼ ~, never colour alone.
  const palette = data.palette.series, verdictColour = data.palette.verdict;
  const colour = key => palette[Math.max(0, seriesKeys.indexOf(key)) % palette.length];
  const METRIC_NAMES = {wall: "wall time", cpu: "CPU time", instructions: "instructions"};

  function scale(unit, metric) {
    // [divisor, axis title]: rates stay "higher is better" for every metric.
    if (metric === "instructions")
      return unit === "bytes" ? [1e6, "bytes per 1,000 instructions"] : [1e3, "operations per 10⁶ instructions"];
    return unit === "bytes" ? [1e9, "GB/s"] : [1, "operations per second"];
  }
  const num = v => (Math.abs(v) >= 100 ? v.toLocaleString("en", {maximumFractionDigits: 0})
                                       : v.toPrecision(3));
  const pct = v => (v >= 100 ? "+" : "") + (v - 100).toFixed(1) + "%";
  function absText(p, unit, metric) {
    const [div, what] = scale(unit, metric);
    return `${num(p.y / div)} ${what}<br>95% CI ${num(p.lo / div)} – ${num(p.hi / div)}<br>n = ${p.n}`;
  }
  function relText(r, base) {
    const ci = r.lo != null ? `<br>95% CI ${pct(r.lo)} … ${pct(r.hi)}` : "";
    const p = r.p != null ? `, p = ${r.p.toFixed(3)}` : "";
    const verdict = r.verdict === "~" ? "no significant change (~)" :
                    r.verdict === "?" ? "too few processes to test (?)" : `significantly ${r.verdict}`;
    return `${pct(r.y)} vs ${base}${ci}<br>${verdict}${p} (${r.method})`;
  }
  const symbol = v => (v === "faster" ? "triangle-up" : v === "slower" ? "triangle-down" : "circle");
  // Plotly reads names, labels and hover text as a little HTML: what came from outside (library and host
  // names, imported algorithm names) is escaped first.
  const legendOf = chart => Object.fromEntries((chart.series || []).map(s => [s.key, esc(s.legend)]));
  for (const chart of charts) chart.x_labels = (chart.x_labels || []).map(esc);

  function traceBase(key, legend) {
    return {name: legend, legendgroup: key, marker: {color: colour(key)},
            visible: state.hidden.has(key) ? "legendonly" : true, hoverinfo: "text"};
  }

  // The baseline a chart is drawn relative to: the chosen one where it has figures here, else the first series
  // that has (said in the chart's title); none where the chart has one series only (then it is absolute, said too).
  function baseHere(chart) {
    const rel = state.view === "relative" && chart.relative && chart.relative[state.metric];
    if (!rel) return null;
    const usable = key => rel[key] && Object.keys(rel[key]).length > 0;
    if (usable(state.base)) return state.base;
    return (chart.series || []).map(s => s.key).find(usable) || null;
  }
  const relativeHere = chart => baseHere(chart) !== null;
  // Why a chart is not drawn as the toolbar asks, in words; "" when it is.
  function departure(chart) {
    if (state.view !== "relative" || chart.kind === "history" || chart.kind === "efficiency") return "";
    const names = Object.fromEntries((chart.series || []).map(s => [s.key, esc(s.legend)]));
    const base = baseHere(chart);
    if (base === null)
      return (chart.series || []).length < 2
        ? `absolute, not relative: only ${names[(chart.series[0] || {}).key] || "one library"} has figures here`
        : `absolute, not relative: no two libraries have figures of one case here`;
    return base !== state.base ? `relative to ${names[base]}: ${esc(state.base)} (the baseline) has no figures here` : "";
  }

  function sizeChart(chart) {
    const legend = legendOf(chart);
    const xaxis = {type: "log", title: {text: chart.x_title || "buffer size (bytes, log scale)"}, tickvals: chart.x,
                   ticktext: chart.x_labels};
    if (relativeHere(chart)) {
      const base = baseHere(chart), rel = chart.relative[state.metric][base];
      const traces = Object.entries(rel).map(([key, points]) => {
        const xs = [], ys = [], plus = [], minus = [], text = [], symbols = [];
        points.forEach((r, i) => { if (!r) return;
          xs.push(chart.x[i]); ys.push(r.y); text.push(`${legend[key]}, ${chart.x_labels[i]}<br>` + relText(r, legend[base]));
          plus.push(r.hi != null ? r.hi - r.y : 0); minus.push(r.lo != null ? r.y - r.lo : 0); symbols.push(symbol(r.verdict)); });
        return {...traceBase(key, legend[key]), type: "scatter", mode: "lines+markers", x: xs, y: ys, text,
                marker: {color: colour(key), symbol: symbols, size: 9},
                error_y: {type: "data", array: plus, arrayminus: minus, visible: true}};
      });
      return [traces, {xaxis, yaxis: {title: {text: `% of ${legend[base]}`}, zeroline: false},
                       shapes: [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 100, y1: 100, line: {color: "#888", dash: "dot"}}]}];
    }
    const [div, what] = scale(chart.unit, state.metric);
    const traces = Object.entries(chart.absolute[state.metric]).map(([key, points]) => {
      const xs = [], ys = [], plus = [], minus = [], text = [];
      points.forEach((p, i) => { if (!p) return;
        xs.push(chart.x[i]); ys.push(p.y / div); plus.push((p.hi - p.y) / div); minus.push((p.y - p.lo) / div);
        text.push(`${legend[key]}, ${chart.x_labels[i]}<br>` + absText(p, chart.unit, state.metric)); });
      return {...traceBase(key, legend[key]), type: "scatter", mode: "lines+markers", x: xs, y: ys, text,
              error_y: {type: "data", array: plus, arrayminus: minus, visible: true}};
    });
    return [traces, {xaxis, yaxis: {title: {text: `${what} (${METRIC_NAMES[state.metric]})`}, rangemode: "tozero"}}];
  }

  function barsChart(chart) {
    const legend = legendOf(chart);
    if (relativeHere(chart)) {
      const base = baseHere(chart), rel = chart.relative[state.metric][base];
      const traces = Object.entries(rel).map(([key, points]) => {
        const xs = [], ys = [], plus = [], minus = [], text = [], lines = [];
        points.forEach((r, i) => { if (!r) return;
          xs.push(chart.x_labels[i]); ys.push(r.y); text.push(`${legend[key]}: ${chart.x_labels[i]}<br>` + relText(r, legend[base]));
          plus.push(r.hi != null ? r.hi - r.y : 0); minus.push(r.lo != null ? r.y - r.lo : 0);
          lines.push(r.verdict === "faster" ? 2 : r.verdict === "slower" ? 2 : 0); });
        return {...traceBase(key, legend[key]), type: "bar", x: xs, y: ys, text, textposition: "none",
                marker: {color: colour(key), line: {width: lines, color: "#000"}},
                error_y: {type: "data", array: plus, arrayminus: minus, visible: true}};
      });
      return [traces, {barmode: "group", yaxis: {title: {text: `% of ${legend[base]}`}, rangemode: "tozero"},
                       xaxis: {automargin: true, tickangle: -30},
                       shapes: [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 100, y1: 100, line: {color: "#555", dash: "dot"}}]}];
    }
    // Absolute: one small panel per case, each with its own axis from zero (cases differ by orders of magnitude).
    const [div, what] = scale(chart.unit, state.metric);
    const n = chart.x.length, columns = Math.min(4, n), rows = Math.ceil(n / columns);
    const traces = [], annotations = [], layout = {grid: {rows, columns, pattern: "independent", ygap: 0.45, xgap: 0.25},
                                                   showlegend: true, annotations};
    chart.x.forEach((_, i) => {
      const axis = i ? String(i + 1) : "";
      layout["xaxis" + axis] = {showticklabels: false};
      layout["yaxis" + axis] = {rangemode: "tozero", tickfont: {size: 9}};
      annotations.push({text: chart.x_labels[i], xref: `x${axis} domain`, yref: `y${axis} domain`, x: 0.5, y: 1.02,
                        yanchor: "bottom",
                        showarrow: false, font: {size: 10}});
      Object.entries(chart.absolute[state.metric]).forEach(([key, points]) => { const p = points[i]; if (!p) return;
        traces.push({...traceBase(key, legend[key]), type: "bar", x: [legend[key]], y: [p.y / div], xaxis: "x" + axis,
                     yaxis: "y" + axis, showlegend: i === 0 || !chart.x.slice(0, i).some((_, j) => points[j]),
                     text: [`${legend[key]}: ${chart.x_labels[i]}<br>` + absText(p, chart.unit, state.metric)],
                     textposition: "none",
                     error_y: {type: "data", array: [(p.hi - p.y) / div], arrayminus: [(p.y - p.lo) / div], visible: true}});
      });
    });
    layout.title = {text: `${what} (${METRIC_NAMES[state.metric]}), each panel from zero`, font: {size: 11}, y: 0.99,
                    yanchor: "top"};
    layout.margin = {t: 70, b: 60, l: 70, r: 10};
    layout.height = Math.max(320, 190 * rows + 80);
    return [traces, layout];
  }

  function historyChart(chart) {
    // By version: the line joins each version's newest run; earlier runs of a version are faint points.
    // By date: the line joins every run in time order.
    const byVersion = state.order !== "date";
    const [div, what] = scale(chart.unit, state.metric);
    const traces = [];
    for (const s of chart.series) {
      const points = chart.points.filter(p => p.series === s.key && p.metrics[state.metric]);
      if (!points.length) continue;
      points.sort((a, b) => byVersion ? a.rank - b.rank || a.date.localeCompare(b.date) : a.date.localeCompare(b.date));
      const first = points[0].metrics[state.metric].y;
      const factor = state.view === "relative" ? 100 / first : 1 / div;
      const verdictOf = p => (p.verdicts[byVersion ? "version" : "date"] || {})[state.metric];
      const newest = byVersion ? points.filter((p, i) => i === points.length - 1 || points[i + 1].rank !== p.rank) : points;
      const earlier = points.filter(p => !newest.includes(p));
      const trace = (members, extra) => ({...traceBase(s.key, esc(s.legend)), type: "scatter",
        x: members.map(p => byVersion ? p.version_label : p.date), y: members.map(p => p.metrics[state.metric].y * factor),
        text: members.map(p => { const m = p.metrics[state.metric], v = verdictOf(p);
          return `${esc(s.legend)}: ${esc(p.lib)} (${esc(p.version)})<br>run ${esc(p.run)}, ${esc(p.date)}, ${esc(p.source)}<br>` +
                 absText(m, chart.unit, state.metric) + (v ? `<br>vs ${esc(v.vs)}: ` + relText(v, "it") : ""); }),
        error_y: {type: "data", visible: true, array: members.map(p => (p.metrics[state.metric].hi - p.metrics[state.metric].y) * factor),
                  arrayminus: members.map(p => (p.metrics[state.metric].y - p.metrics[state.metric].lo) * factor)},
        ...extra});
      const marked = p => ["faster", "slower"].includes((verdictOf(p) || {}).verdict);
      traces.push(trace(newest, {mode: "lines+markers",
        marker: {color: colour(s.key), size: newest.map(p => marked(p) ? 14 : 7), symbol: newest.map(p => symbol((verdictOf(p) || {}).verdict))}}));
      if (earlier.length)
        traces.push(trace(earlier, {mode: "markers", showlegend: false, opacity: 0.4, name: `${s.legend} (earlier runs)`,
          marker: {color: colour(s.key), size: 6, symbol: earlier.map(p => symbol((verdictOf(p) || {}).verdict))}}));
    }
    const ytitle = state.view === "relative" ? "% of each series' first point" : `${what} (${METRIC_NAMES[state.metric]})`;
    const xaxis = byVersion ? {type: "category", title: {text: "library version (ordered by version)"},
                               categoryorder: "array", categoryarray: chart.version_order}
                            : {type: "date", title: {text: "date of the run"}};
    // Change points (`sslperf regressions`): a dashed line where a series' level changed, with its size.
    const shown = new Set(chart.series.map(s => s.key));
    const marks = (chart.change_points || []).filter(c => c.metric === state.metric && shown.has(c.series));
    const at = c => byVersion ? c.version_label : c.date;
    const shapes = marks.map(c => ({type: "line", xref: "x", yref: "paper", x0: at(c), x1: at(c), y0: 0, y1: 1,
                                    line: {color: colour(c.series), dash: "dash", width: 1}}));
    const annotations = marks.map(c => ({x: at(c), xref: "x", y: 1, yref: "paper", yanchor: "bottom", showarrow: false,
                                         text: `${c.percent > 0 ? "+" : ""}${c.percent.toFixed(1)}%`,
                                         hovertext: `change point of ${esc(c.series)}: ${esc(c.from)} → ${esc(c.version_label)}, ` +
                                                    `${c.verdict}, p = ${c.p.toExponential(1)}`,
                                         font: {size: 10, color: verdictColour[c.verdict] || verdictColour["~"]}}));
    return [traces, {xaxis, yaxis: {title: {text: ytitle}, rangemode: "tozero"}, shapes, annotations}];
  }

  function efficiencyChart(chart) {
    // Scaling efficiency against threads, each point with the interval sslperf computed (none at 1 thread: 100%
    // by definition); the same in every view, as it is a ratio already.
    const legend = legendOf(chart);
    const traces = Object.entries(chart.points).map(([key, points]) => ({...traceBase(key, legend[key]),
      type: "scatter", mode: "lines+markers", x: points.map(p => p.x), y: points.map(p => p.y),
      text: points.map(p => `${legend[key]}, ${p.x} thread${p.x > 1 ? "s" : ""}: ${p.y.toFixed(1)}%` +
                            (p.lo != null ? `<br>95% interval ${p.lo.toFixed(1)} – ${p.hi.toFixed(1)}% (${p.method})` : "")),
      error_y: {type: "data", visible: true, array: points.map(p => p.hi != null ? p.hi - p.y : 0),
                arrayminus: points.map(p => p.lo != null ? p.y - p.lo : 0)}}));
    return [traces, {xaxis: {type: "log", title: {text: "threads (log scale)"}, tickvals: chart.x, ticktext: chart.x_labels},
                     yaxis: {title: {text: "efficiency, % (100% = N threads do N times the work)"}, rangemode: "tozero"},
                     shapes: [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 100, y1: 100, line: {color: "#888", dash: "dot"}}]}];
  }

  const DRAW = {size: sizeChart, bars: barsChart, history: historyChart, efficiency: efficiencyChart};

  function draw() {
    for (const chart of charts) {
      const el = document.getElementById(chart.id);
      if (!chart.metrics.includes(state.metric)) {
        Plotly.purge(el);
        el.innerHTML = `<p class="na">No ${METRIC_NAMES[state.metric]} figures for this chart.</p>`;
        el.dataset.drawn = "none";
        continue;
      }
      const [traces, layout] = DRAW[chart.kind](chart);
      const view = chart.kind === "history" ? state.view : chart.kind === "efficiency" ? "ratio"
                 : (relativeHere(chart) ? "relative" : "absolute");
      const base = view === "relative" && chart.kind !== "history" ? baseHere(chart) : state.base;
      el.dataset.drawn = `${view}/${state.metric}/${base}/${state.order}`;
      const why = departure(chart);
      el.dataset.departure = why;
      if (el.querySelector("p.na")) el.innerHTML = "";
      const subtitle = (why ? `<b>${why}</b><br>` : "") + (view === "relative" && chart.kind !== "history"
        ? `${METRIC_NAMES[state.metric]}, % of ${esc(base)}: higher is faster; ` +
          (chart.kind === "bars" ? "outlined bars differ significantly" : "▲/▼ significant, ● within noise")
        : "");
      if (layout.title && why) layout.title = {...layout.title, text: `<b>${why}</b><br>${layout.title.text}`};
      Plotly.react(el, traces, {margin: {t: 40, b: 150, l: 70, r: 10}, height: 480, hovermode: "closest",
                                showlegend: true, legend: {orientation: "h", yref: "container", y: 0, yanchor: "bottom"},
                                title: {text: subtitle, font: {size: 11}}, ...layout},
                   {displaylogo: false, responsive: true, toImageButtonOptions: {format: "svg"}});
    }
    document.body.dataset.view = `${state.view}/${state.metric}/${state.base}/${state.order}`;
  }

  function control(label, options, key) {
    if (options.length < 2) return "";
    const opts = options.map(([value, text]) =>
      `<option value="${esc(value)}"${value === state[key] ? " selected" : ""}>${esc(text)}</option>`);
    return `<label>${label} <select data-key="${key}">${opts.join("")}</select></label>`;
  }
  function toolbar() {
    const bar = document.getElementById("toolbar");
    const names = Object.fromEntries(charts.flatMap(c => (c.series || []).map(s => [s.key, s.legend])));
    const views = [["relative", "relative (% of baseline)"], ["absolute", "absolute"]];
    let html = control("view", data.history ? [["absolute", "absolute"], ["relative", "% of first point"]] : views, "view");
    html += control("baseline", data.history ? [] : seriesKeys.map(k => [k, names[k]]), "base");
    html += control("metric", metrics.map(m => [m, METRIC_NAMES[m]]), "metric");
    if (data.history) html += control("order", [["version", "by version"], ["date", "by date"]], "order");
    html += " " + seriesKeys.map(k => `<label class="lib"><input type="checkbox" data-series="${esc(k)}"${state.hidden.has(k) ? "" : " checked"}>` +
                                      `<span style="color:${colour(k)}">■</span> ${esc(names[k])}</label>`).join(" ");
    bar.innerHTML = html;
    bar.querySelectorAll("select").forEach(s => s.addEventListener("change", () => { state[s.dataset.key] = s.value; draw(); }));
    bar.querySelectorAll("input[data-series]").forEach(box => box.addEventListener("change", () => {
      box.checked ? state.hidden.delete(box.dataset.series) : state.hidden.add(box.dataset.series); draw(); }));
  }
  if (!metrics.includes(state.metric)) state.metric = metrics[0];
  toolbar();
  draw();
})();
