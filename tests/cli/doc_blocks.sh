# Sourced by the tests that run a document's code blocks as written (tests/cli/guide_test.sh,
# tests/install/readme_test.sh); not a test itself (no _test.sh suffix).

# doc_blocks DOC DIR LANG...: one file per ```LANG block of DOC (LANG one of the given info
# strings), DIR/NN.LANG, numbered in the order the blocks appear.
doc_blocks() {
  local doc=$1 dir=$2
  shift 2
  local langs
  langs=$(IFS='|'; echo "$*")
  awk -v dir="$dir" -v langs="^(${langs})$" '
    /^```/ && !inside { lang = substr($0, 4); sub(/[[:space:]]*$/, "", lang)
                        if (lang ~ langs) { n++; file = sprintf("%s/%02d.%s", dir, n, lang); inside = 1 }
                        next }
    /^```/ && inside  { inside = 0; close(file); next }
    inside            { print > file }
  ' "$doc"
}

# run_block WHAT BLOCK LOG DIR COMMAND...: runs COMMAND in DIR with its output in LOG; when it
# fails, shows the block and the output on stderr (WHAT names them) and exits 1.
run_block() {
  local what=$1 block=$2 log=$3 dir=$4
  shift 4
  if ! (cd "$dir" && "$@") >"$log" 2>&1; then
    echo "$what failed:" >&2
    sed 's/^/  | /' "$block" >&2
    echo "output:" >&2
    cat "$log" >&2
    exit 1
  fi
}
