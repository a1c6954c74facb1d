/* surgeon HTML report: draws each region (embedded as JSON in #surgeon-data) as an SVG, laid out
   by dagre (inlined before this script). A region is {nodes: [[op, domain, name, [in], [out],
   {attr: text}]], values: [[name, type, constant]], omitted}; value references are indexes.
   The first drawings are made at once, those scrolled into view next, and the rest in the
   background a few at a time (the page stays responsive); surgeonRenderAll() (or #render-all
   in the address) draws them all at once. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var FONT = "12px ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace";
  var LINE = 15, PAD = 8, MAX_ATTRS = 8, MIN_SCALE = 0.7, EAGER = 4;
  var data = JSON.parse(document.getElementById("surgeon-data").textContent);
  var entries = {};
  data.rewrites.forEach(function (r) { entries["rw:" + r.id] = r; });
  data.misses.forEach(function (m) { entries["nm:" + m.id] = m; });
  var ctx = document.createElement("canvas").getContext("2d");
  var drawn = 0;

  function width(text, bold) {
    ctx.font = (bold ? "bold " : "") + FONT;
    return ctx.measureText(text).width;
  }

  function cut(text, n) { return text.length > n ? text.slice(0, n - 1) + "\u2026" : text; }

  function wrap(name, n) {
    /* A name is never cut: it is broken into lines of at most n characters after its separators
       ("/", ".", "_", ":", "-"), a part longer than n across lines; every character is shown. */
    var parts = name.match(/[^\/._:\-]*[\/._:\-]*/g).filter(function (p) { return p.length; });
    var lines = [], line = "";
    parts.forEach(function (part) {
      if (line && line.length + part.length > n) { lines.push(line); line = ""; }
      while (part.length > n) { lines.push(part.slice(0, n)); part = part.slice(n); }
      line += part;
    });
    if (line || !lines.length) lines.push(line);
    return lines;
  }

  function named(name, n, cls, bold) {
    return wrap(name, n).map(function (text) { return { text: text, cls: cls, bold: bold }; });
  }

  var SHAPE_OPS = ["Shape", "Reshape", "Unsqueeze", "Squeeze", "Concat", "Gather", "Slice", "Transpose", "Expand",
    "Cast", "Identity", "Flatten", "Split", "ConstantOfShape", "Range", "Tile", "Size"];
  var MATH_OPS = ["Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "ReduceSum", "ReduceMean", "Einsum", "Neg", "Pow",
    "Sqrt", "Abs", "Clip", "Max", "Min", "Floor", "Ceil", "Round", "Where", "Equal", "Less", "Greater", "Not", "And"];

  function kind(op, domain) {
    if (domain && domain !== "ai.onnx") return "custom";
    if (op === "Constant") return "constant";
    if (op === "GridSample" || op === "AffineGrid") return "sampler";
    if (SHAPE_OPS.indexOf(op) >= 0) return "shape";
    if (MATH_OPS.indexOf(op) >= 0) return "math";
    return "other";
  }

  function param(n, slot, valueName) {
    /* The input's name in the op's schema ("axes", "shape"), else the value's name (whole). */
    var names = (data.schemas || {})[(n[1] || "") + "::" + n[0]];
    if (!names || !names.length) return valueName;
    if (slot < names.length) return names[slot].replace("*", "");
    var last = names[names.length - 1];
    return last.slice(-1) === "*" ? last.slice(0, -1) + "[" + slot + "]" : valueName;
  }

  function nodeLines(n, values, produced) {
    var lines = [{ text: (n[1] ? n[1] + "::" : "") + n[0], cls: "op", bold: true }];
    if (n[2]) lines = lines.concat(named(n[2], 36, "name"));
    var keys = Object.keys(n[5]);
    keys.slice(0, MAX_ATTRS).forEach(function (k) {
      if (n[0] === "Constant" && k === "value") return;  // shown as the output's value below
      lines.push({ text: cut(k + " = " + n[5][k], 44), cls: "attr" });
    });
    if (keys.length > MAX_ATTRS) lines.push({ text: "+" + (keys.length - MAX_ATTRS) + " more", cls: "attr" });
    n[3].forEach(function (v, slot) {  // constants (initializers, Constant nodes): inside the box
      if (v >= 0 && !(v in produced) && values[v][2]) {
        var label = param(n, slot, values[v][0]);  // a name, whole; the value after it may be cut
        if (label.length + 3 + values[v][2].length <= 44) {
          lines.push({ text: label + " = " + values[v][2], cls: "const" });
        } else {
          var head = named(label + " =", 44, "const");
          lines = lines.concat(head);
          lines.push({ text: "  " + cut(values[v][2], 42), cls: "const" });
        }
      }
    });
    n[4].forEach(function (v) {
      if (v < 0) return;
      var val = values[v];
      var text = "\u2192 " + (val[1] || "?") + (n[0] === "Constant" && val[2] ? " = " + val[2] : "");
      lines.push({ text: cut(text, 44), cls: "type" });
    });
    return lines;
  }

  function box(lines, extra) {
    var w = 0;
    lines.forEach(function (l) { w = Math.max(w, width(l.text, l.bold)); });
    var label = { width: Math.ceil(w) + 2 * PAD, height: lines.length * LINE + PAD, lines: lines };
    for (var k in extra) label[k] = extra[k];
    return label;
  }

  function folded(n) { return n[0] === "Constant" && !n[1] && n[3].length === 0; }

  function graphOf(entry, side) {
    /* Constant nodes are drawn inside the nodes that read them, as initializers are: a
       decomposition's dozens of constants would otherwise take most of the width. */
    var region = entry[side], values = region.values, produced = {};
    region.nodes.forEach(function (n, i) {
      if (folded(n)) return;
      n[4].forEach(function (v) { if (v >= 0) produced[v] = "n" + i; });
    });
    var g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "TB", nodesep: 14, ranksep: 26, edgesep: 8, marginx: 4, marginy: 4 });
    g.setDefaultEdgeLabel(function () { return {}; });
    region.nodes.forEach(function (n, i) {
      if (folded(n)) return;
      var label = n[2] + " (" + ((n[1] && n[1] !== "ai.onnx") ? n[1] + "::" : "") + n[0] + ")";
      g.setNode("n" + i, box(nodeLines(n, values, produced), {
        kind: kind(n[0], n[1]), anchor: side === "before" && label === entry.anchor, title: n[2] || n[0]
      }));
    });
    region.nodes.forEach(function (n, i) {
      if (folded(n)) return;
      n[3].forEach(function (v, slot) {
        if (v < 0) return;
        if (v in produced) { g.setEdge(produced[v], "n" + i, {}, v + ":" + i + ":" + slot); return; }
        if (values[v][2]) return;  // a constant: inside the box
        var id = "i" + v;
        if (!g.hasNode(id)) {
          g.setNode(id, box(named(values[v][0], 40, "vname", true).concat(
            [{ text: values[v][1] || "?", cls: "type" }]), { kind: "input", title: values[v][0] }));
        }
        g.setEdge(id, "n" + i, {}, v + ":" + i + ":" + slot);
      });
    });
    (entry.outputs || []).forEach(function (name) {
      for (var v = 0; v < values.length; v++) {
        if (values[v][0] === name && v in produced) {
          g.setNode("o" + v, box(named(name, 40, "vname", true).concat(
            [{ text: values[v][1] || "?", cls: "type" }]), { kind: "output", title: name }));
          g.setEdge(produced[v], "o" + v, {}, "out" + v);
          return;
        }
      }
    });
    dagre.layout(g);
    return g;
  }

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function path(points) {
    var d = "M" + points[0].x + "," + points[0].y;
    for (var i = 1; i < points.length - 1; i++) {
      var p = points[i], q = points[i + 1];
      d += " Q" + p.x + "," + p.y + " " + (p.x + q.x) / 2 + "," + (p.y + q.y) / 2;
    }
    var last = points[points.length - 1];
    return d + " L" + last.x + "," + last.y;
  }

  // The drawing's extent: dagre's graph size leaves out edges routed around the boxes, whose
  // curves can pass left of x = 0.
  function bounds(g) {
    var x0 = 0, y0 = 0, x1 = g.graph().width, y1 = g.graph().height;
    function take(x, y) { x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y); }
    g.edges().forEach(function (e) { g.edge(e).points.forEach(function (p) { take(p.x - 4, p.y - 4); take(p.x + 4, p.y + 4); }); });
    return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
  }

  function svgOf(g, regionNodes) {
    var size = bounds(g);
    var svg = el("svg", {
      "class": "graph", viewBox: size.x + " " + size.y + " " + size.width + " " + size.height,
      width: size.width, height: size.height, "data-nodes": regionNodes, "data-edges": g.edgeCount(),
      "data-boxes": g.nodes().length
    });
    svg.style.maxWidth = "100%";
    svg.style.minWidth = Math.round(size.width * MIN_SCALE) + "px";  // scrolls rather than shrink past it
    svg.style.height = "auto";
    g.edges().forEach(function (e) {
      el("path", { "class": "edge", d: path(g.edge(e).points), "marker-end": "url(#surgeon-arrow)" }, svg);
    });
    g.nodes().forEach(function (id) {
      var n = g.node(id);
      var group = el("g", { "class": "node " + n.kind + (n.anchor ? " anchor" : ""), "data-id": id }, svg);
      el("title", {}, group).textContent = n.title;
      var x = n.x - n.width / 2, y = n.y - n.height / 2;
      var round = (n.kind === "input" || n.kind === "output") ? n.height / 2 : 4;
      el("rect", { x: x, y: y, width: n.width, height: n.height, rx: round, ry: round }, group);
      var text = el("text", { x: x + PAD, y: y + PAD / 2 + LINE - 3 }, group);
      n.lines.forEach(function (line, k) {
        var span = el("tspan", { x: x + PAD, dy: k === 0 ? 0 : LINE, "class": line.cls }, text);
        span.textContent = line.text;
      });
    });
    return svg;
  }

  function fail(where, err) {
    var message = where + ": " + (err && err.message ? err.message : String(err));
    window.surgeonErrors.push(message);
    document.documentElement.setAttribute("data-errors", window.surgeonErrors.length);
    return message;
  }

  function draw(container) {
    if (container.getAttribute("data-drawn")) return;
    container.setAttribute("data-drawn", "1");
    var key = container.getAttribute("data-draw").split(":");
    var entry = entries[key[0] + ":" + key[1]];
    try {
      var region = entry[key[2]];
      var svg = svgOf(graphOf(entry, key[2]), region.nodes.length);
      container.textContent = "";
      container.appendChild(svg);
      container.addEventListener("click", function () { container.classList.toggle("zoomed"); });
      drawn += 1;
      document.documentElement.setAttribute("data-drawn", drawn);
    } catch (err) {
      container.textContent = "could not draw: " + fail(container.getAttribute("data-draw"), err);
    }
  }

  function all() { return document.querySelectorAll(".drawing[data-draw]"); }

  window.surgeonRenderAll = function () {
    Array.prototype.forEach.call(all(), draw);
    return drawn;
  };

  function start() {
    var defs = el("svg", { width: 0, height: 0, "class": "defs", "aria-hidden": "true" });
    var marker = el("marker", {
      id: "surgeon-arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 7, markerHeight: 7,
      orient: "auto-start-reverse"
    }, el("defs", {}, defs));
    el("path", { d: "M0,0 L8,4 L0,8 z", "class": "arrow" }, marker);
    document.body.appendChild(defs);
    document.documentElement.setAttribute("data-drawings", all().length);
    if (location.hash === "#render-all" || !("IntersectionObserver" in window)) {
      window.surgeonRenderAll();
    } else {
      var seen = new IntersectionObserver(function (items) {
        items.forEach(function (item) {
          if (item.isIntersecting) { seen.unobserve(item.target); draw(item.target); }
        });
      }, { rootMargin: "600px 0px" });
      var queue = Array.prototype.slice.call(all());
      queue.slice(0, EAGER).forEach(draw);
      queue.slice(EAGER).forEach(function (c) { seen.observe(c); });
      var background = function () {
        var until = Date.now() + 30;
        while (queue.length && Date.now() < until) draw(queue.shift());
        if (queue.length) setTimeout(background, 15);
      };
      setTimeout(background, 50);
    }
    window.addEventListener("beforeprint", window.surgeonRenderAll);
    document.documentElement.setAttribute("data-ready", "1");
  }

  try { start(); } catch (err) { fail("start", err); }
})();
