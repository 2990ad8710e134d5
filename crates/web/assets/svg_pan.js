// Pan and zoom for a call graph drawn by Graphviz, written into the SVG
// that `protoprof callgraph --format svg` saves: the wheel zooms around
// the pointer, dragging pans, a double click goes back to the whole graph.
(function () {
  "use strict";
  var svg = document.documentElement;
  var graph = document.getElementById("graph0");
  if (!graph || !svg.createSVGPoint) {
    return;
  }
  var viewport = document.createElementNS("http://www.w3.org/2000/svg", "g");
  viewport.setAttribute("id", "viewport");
  graph.parentNode.insertBefore(viewport, graph);
  viewport.appendChild(graph);
  var view = { scale: 1, x: 0, y: 0 };
  var dragFrom = null;

  function show() {
    viewport.setAttribute(
      "transform",
      "translate(" + view.x + "," + view.y + ") scale(" + view.scale + ")"
    );
  }

  // The pointer in the SVG's own coordinates (outside the viewport's
  // transform, which changes as it is used).
  function at(event) {
    var point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  }

  svg.addEventListener(
    "wheel",
    function (event) {
      event.preventDefault();
      var point = at(event);
      var wanted = view.scale * Math.pow(1.002, -event.deltaY);
      var factor = Math.min(Math.max(wanted, 0.05), 50) / view.scale;
      view.x = point.x - (point.x - view.x) * factor;
      view.y = point.y - (point.y - view.y) * factor;
      view.scale *= factor;
      show();
    },
    { passive: false }
  );
  svg.addEventListener("mousedown", function (event) {
    if (event.button === 0) {
      dragFrom = at(event);
      svg.style.cursor = "move";
    }
  });
  window.addEventListener("mousemove", function (event) {
    if (dragFrom === null) {
      return;
    }
    var point = at(event);
    view.x += point.x - dragFrom.x;
    view.y += point.y - dragFrom.y;
    dragFrom = point;
    show();
  });
  window.addEventListener("mouseup", function () {
    dragFrom = null;
    svg.style.cursor = "";
  });
  svg.addEventListener("dblclick", function () {
    view = { scale: 1, x: 0, y: 0 };
    show();
  });
})();
