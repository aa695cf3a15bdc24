#!/bin/sh
# One browser test of the attention viewer: headless Chromium opens a page from the file
# system, runs its scripts, and the DOM it leaves is checked with grep.
#
#   load_page.sh PAGE QUERY OUT [CHECK...]
#
# PAGE is an attend_viewer.html, QUERY the URL's "?..." (the view), OUT a file prefix (OUT.html
# gets the DOM, OUT.log Chromium's messages). Each CHECK is one of:
#   count:ROLE:N       exactly N elements have data-role="ROLE"
#   text:STRING        the DOM holds STRING
#   state:STATE        the page says data-state="STATE" (ready, error)
#   no-console         the page logged nothing to its console (no errors, no warnings)
#   darkest:ROW:COL    the line drawn darkest (largest stroke-opacity) is output ROW -> input
#                      COL, and the lines' opacities are in the order of their weights
# Every page must also have finished loading (data-state ready or error). Exits 77 (CTest:
# skipped) when chromium is not installed, 1 if any check failed.
#   load_page.sh --available     exits 0 if chromium is there, else 77 (what a test checks
#                                before it runs a lesson only to load its output)
set -u
# ATTEND_CHROMIUM: the browser to use (the skip test points it at a file that does not exist).
browser=${ATTEND_CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$browser" ] || [ ! -x "$browser" ]; then
  echo "SKIPPED: chromium is not installed (scripts/test_viewer.sh installs it)"
  exit 77
fi
[ "$1" = "--available" ] && exit 0
page=$1 query=$2 out=$3
shift 3
url="file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")$query"
# --virtual-time-budget: run the page's scripts and timers, then dump (no real waiting).
"$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
  --user-data-dir="$out.profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=5000 --dump-dom "$url" > "$out.html" 2> "$out.log"
rm -rf "$out.profile"
# One element per line, so that grep -c counts elements.
tr '>' '\n' < "$out.html" > "$out.lines"
status=0
fail() { echo "FAILED: $*"; status=1; }
# Whatever the view, the page must have finished: drawn it, or said why not.
grep -Eq 'data-state="(ready|error)"' "$out.html" || fail "the page did not finish loading"
for check in "$@"; do
  kind=${check%%:*} rest=${check#*:}
  case $kind in
    count)
      role=${rest%%:*} n=${rest#*:}
      got=$(grep -c "data-role=\"$role\"" "$out.lines")
      [ "$got" -eq "$n" ] || fail "$got elements $role, expected $n" ;;
    text) grep -qF -- "$rest" "$out.html" || fail "the page does not say: $rest" ;;
    state) grep -q "data-state=\"$rest\"" "$out.html" || fail "the page is not $rest" ;;
    no-console)
      if grep -q "CONSOLE" "$out.log"; then fail "console messages:"; grep "CONSOLE" "$out.log"; fi ;;
    darkest)
      # Each line element as "opacity weight row col"; the first after sorting is the darkest.
      grep 'data-role="line"' "$out.lines" |
        sed 's/.*stroke-opacity="\([^"]*\)".*data-row="\([^"]*\)" data-col="\([^"]*\)" data-weight="\([^"]*\)".*/\1 \4 \2 \3/' |
        sort -k1,1gr -k2,2gr > "$out.sorted"
      top=$(head -n 1 "$out.sorted")
      awk 'NR > 1 && $2 > last + 1e-9 { bad = 1 } { last = $2 } END { exit bad }' "$out.sorted" ||
        fail "a lighter line has a larger weight than a darker one"
      echo "darkest line (opacity weight row col): $top"
      set -- $top
      [ "${3:-}:${4:-}" = "$rest" ] || fail "the darkest line is $3:$4, expected $rest" ;;
    *) fail "unknown check $check" ;;
  esac
done
[ $status -eq 0 ] && echo "passed: $url"
exit $status
