// Pan and zoom for a call graph drawn by Graphviz, written into the SVG
// that `protoprof callgraph --format svg` saves (before the drawing, as
// pprof places its own script): the wheel zooms around the pointer,
// dragging pans, a double click goes back to the first view. The drawing
// is in the group `viewport`, whose first transform is the first view.
(function () {
  "use strict";
  var svg = document.documentElement;
  if (!svg.createSVGPoint) {
    return;
  }
  var first = null;
  var view = null;
  var dragFrom = null;

  // The viewport, and the view its transform gives (read when first
  // used: this script runs before the drawing is parsed).
  function viewport() {
    var group = document.getElementById("viewport");
    if (group && view === null) {
      first = group.getAttribute("transform") || "";
      var scale = /scale\(\s*([-\d.e]+)/.exec(first);
      var shift = /translate\(\s*([-\d.e]+)[\s,]+([-\d.e]+)/.exec(first);
      var s = scale ? parseFloat(scale[1]) : 1;
      view = {
        scale: s,
        x: shift ? s * parseFloat(shift[1]) : 0,
        y: shift ? s * parseFloat(shift[2]) : 0,
      };
    }
    return group;
  }

  function show() {
    viewport().setAttribute(
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
      if (!viewport()) {
        return;
      }
      event.preventDefault();
      var point = at(event);
      var wanted = view.scale * Math.pow(1.002, -event.deltaY);
      var factor = Math.min(Math.max(wanted, 0.02), 50) / view.scale;
      view.x = point.x - (point.x - view.x) * factor;
      view.y = point.y - (point.y - view.y) * factor;
      view.scale *= factor;
      show();
    },
    { passive: false }
  );
  svg.addEventListener("mousedown", function (event) {
    if (event.button === 0 && viewport()) {
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
    var group = viewport();
    if (group) {
      group.setAttribute("transform", first);
      view = null;
    }
  });
})();
