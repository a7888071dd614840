// speedscope-probe.js: loaded by speedscope.bats before speedscope's own
// bundle, on a copy of its index.html; reads off what speedscope made of the
// profile it was handed.  Once the Sandwich view has rows (or says it has
// none), it presses Ctrl+S, speedscope's Export, and keeps the file that
// Export would have downloaded instead of downloading it; then it writes,
// base64-encoded in <pre id="speedscope-probe"> for --dump-dom, one JSON
// object:
//   log       what speedscope logged (which importer it chose, among others)
//   alerts    the messages of its alerts ("Unrecognized format!")
//   exported  its Export: the profile as speedscope holds it, in its own
//             file format (frames, and every open and close with its value)
//   rows      the Sandwich view's rows as shown: [total, self, name]
//   blocked   every URL the page's Content-Security-Policy refused (the
//             test's copy of index.html allows file:, blob: and data: only)
// It gives up after 300 polls (30 s of the page's time) and writes what it has.
(function () {
	'use strict';
	var seen = {log: [], alerts: [], exported: null, rows: [], blocked: []};
	var done = false, saved = false, polls = 0;

	function finish() {
		if (done)
			return;
		done = true;
		document.querySelectorAll('tr').forEach(function (tr) {
			var cells = tr.querySelectorAll('td');
			if (cells.length === 3)
				seen.rows.push(Array.prototype.map.call(cells, function (td) {
					return td.textContent;
				}));
		});
		var pre = document.createElement('pre');
		pre.id = 'speedscope-probe';
		pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(seen))));
		document.body.appendChild(pre);
	}

	document.addEventListener('securitypolicyviolation', function (e) {
		seen.blocked.push(e.blockedURI);
	});
	var log = console.log;
	console.log = function () {
		seen.log.push(Array.prototype.map.call(arguments, String).join(' '));
		return log.apply(console, arguments);
	};
	window.alert = function (message) {
		seen.alerts.push(String(message));
		finish();
	};
	// Export hands its file to an <a download> as a blob URL, and clicks it
	var createObjectURL = URL.createObjectURL;
	URL.createObjectURL = function (blob) {
		blob.text().then(function (text) {
			seen.exported = JSON.parse(text);
			finish();
		});
		return createObjectURL.call(URL, blob);
	};
	HTMLAnchorElement.prototype.click = function () {};

	var timer = setInterval(function () {
		if (done || ++polls > 300) {
			clearInterval(timer);
			finish();
			return;
		}
		if (!saved && document.querySelector('td')) {
			saved = true;
			window.dispatchEvent(new KeyboardEvent('keydown', {key: 's', ctrlKey: true}));
		}
	}, 100);
})();
