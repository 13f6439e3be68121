(function () {
  // Opens the element the address's fragment names (a call, a turn) and the
  // details holding it, so that a link to a call shows its output.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var e = target; e; e = e.parentElement) {
      if (e.tagName === 'DETAILS') e.open = true;
    }
    if (target) target.scrollIntoView();
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  // The buttons open or close every call and long text at once.
  function setAll(open) {
    document.querySelectorAll('details').forEach(function (d) { d.open = open; });
  }
  document.getElementById('expand').addEventListener('click', function () { setAll(true); });
  document.getElementById('collapse').addEventListener('click', function () { setAll(false); });
  document.documentElement.setAttribute('data-view-ready', '1');
})();
