package main

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const fixture = "testdata/fixture"

func fixtureMutants(t *testing.T) []*Mutant {
	t.Helper()
	ms, err := packageMutants(fixture, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestMutantsOfFixture(t *testing.T) {
	var got []string
	for _, m := range fixtureMutants(t) {
		got = append(got, m.ID+" "+m.Desc)
	}
	want := []string{
		"tiny/tiny.go:12:7:cond-boundary < -> <=",
		"tiny/tiny.go:12:9:int-inc 0 -> 1",
		"tiny/tiny.go:12:11:logical && -> ||",
		"tiny/tiny.go:13:10:int-inc 0 -> 1",
		"tiny/tiny.go:13:13:return-nil return ErrNegative -> return nil",
		"tiny/tiny.go:15:11:int-inc 0 -> 1",
		"tiny/tiny.go:15:16:cond-boundary < -> <=",
		"tiny/tiny.go:15:18:int-dec 3 -> 2",
		"tiny/tiny.go:15:18:int-inc 3 -> 4",
		"tiny/tiny.go:16:8:negate == -> !=",
		"tiny/tiny.go:16:11:int-dec 1 -> 0",
		"tiny/tiny.go:16:11:int-inc 1 -> 2",
		"tiny/tiny.go:17:4:branch-swap continue -> break",
		"tiny/tiny.go:19:8:cond-boundary > -> >=",
		"tiny/tiny.go:20:4:branch-swap break -> continue",
		"tiny/tiny.go:23:22:if-err-false if err != nil -> never taken",
		"tiny/tiny.go:23:26:negate != -> ==",
		"tiny/tiny.go:24:10:int-inc 0 -> 1",
		"tiny/tiny.go:24:13:return-nil return err -> return nil",
		"tiny/tiny.go:26:2:remove-call remove note(n)",
		"tiny/tiny.go:27:7:cond-boundary > -> >=",
		"tiny/tiny.go:37:12:int-dec 2 -> 1",
		"tiny/tiny.go:37:12:int-inc 2 -> 3",
		"tiny/tiny.go:40:34:int-dec 1 -> 0",
		"tiny/tiny.go:40:34:int-inc 1 -> 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Every mutant changes exactly its own line, into a file that still
// parses, and the original file is left alone.
func TestApplyChangesOneLine(t *testing.T) {
	path := filepath.Join(fixture, "tiny", "tiny.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig := strings.Split(string(src), "\n")
	wantLine := map[string]string{
		"tiny/tiny.go:12:11:logical":       "\tif n < 0 || strict {",
		"tiny/tiny.go:13:13:return-nil":    "\t\treturn 0, nil",
		"tiny/tiny.go:20:4:branch-swap":    "\t\t\tcontinue",
		"tiny/tiny.go:23:22:if-err-false":  "\tif err := check(n); (err != nil) && false {",
		"tiny/tiny.go:26:2:remove-call":    "\t",
		"tiny/tiny.go:15:18:int-dec":       "\tfor i := 0; i < 2; i++ {",
		"tiny/tiny.go:27:7:cond-boundary":  "\tif n >= max {",
		"tiny/tiny.go:16:8:negate":         "\t\tif i != 1 {",
		"tiny/tiny.go:13:10:int-inc":       "\t\treturn 1, ErrNegative",
		"tiny/tiny.go:24:13:return-nil":    "\t\treturn 0, nil",
		"tiny/tiny.go:17:4:branch-swap":    "\t\t\tbreak",
		"tiny/tiny.go:12:7:cond-boundary":  "\tif n <= 0 && strict {",
		"tiny/tiny.go:40:34:int-inc":       "func Second() int { return table[2] }",
		"tiny/tiny.go:23:26:negate":        "\tif err := check(n); err == nil {",
		"tiny/tiny.go:15:16:cond-boundary": "\tfor i := 0; i <= 3; i++ {",
		"tiny/tiny.go:19:8:cond-boundary":  "\t\tif n >= max {",
		"tiny/tiny.go:16:11:int-dec":       "\t\tif i == 0 {",
		"tiny/tiny.go:37:12:int-inc":       "var table [3]int",
		"tiny/tiny.go:12:9:int-inc":        "\tif n < 1 && strict {",
		"tiny/tiny.go:24:10:int-inc":       "\t\treturn 1, err",
		"tiny/tiny.go:15:11:int-inc":       "\tfor i := 1; i < 3; i++ {",
		"tiny/tiny.go:15:18:int-inc":       "\tfor i := 0; i < 4; i++ {",
		"tiny/tiny.go:16:11:int-inc":       "\t\tif i == 2 {",
		"tiny/tiny.go:37:12:int-dec":       "var table [1]int",
		"tiny/tiny.go:40:34:int-dec":       "func Second() int { return table[0] }",
	}
	for _, m := range fixtureMutants(t) {
		out := m.apply(src)
		if _, err := parser.ParseFile(token.NewFileSet(), "x.go", out, 0); err != nil {
			t.Errorf("%s: mutated file does not parse: %v", m.ID, err)
		}
		lines := strings.Split(string(out), "\n")
		if len(lines) != len(orig) {
			t.Fatalf("%s: %d lines, want %d", m.ID, len(lines), len(orig))
		}
		for i := range lines {
			changed := lines[i] != orig[i]
			if changed != (i+1 == m.Line) {
				t.Errorf("%s: line %d changed=%v: %q", m.ID, i+1, changed, lines[i])
			}
		}
		want, ok := wantLine[m.ID]
		if !ok {
			t.Errorf("%s: no expected line in the test", m.ID)
		} else if got := lines[m.Line-1]; got != want {
			t.Errorf("%s: line %d = %q, want %q", m.ID, m.Line, got, want)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(src) {
		t.Error("applying mutants changed the fixture on disk")
	}
}

func TestErrShapes(t *testing.T) {
	for name, want := range map[string]bool{"err": true, "ctxErr": true, "errGone": true, "ErrEmpty": true, "errors": false, "error": false, "n": false, "terr": false} {
		if got := isErrName(name); got != want {
			t.Errorf("isErrName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPackageDirs(t *testing.T) {
	dirs, err := packageDirs(fixture, []string{"./..."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// tinytest has only a _test.go file: nothing to mutate.
	if !slices.Equal(dirs, []string{"tiny"}) {
		t.Errorf("packageDirs(./...) = %q, want [tiny]", dirs)
	}
	dirs, err = packageDirs(fixture, []string{"./..."}, regexp.MustCompile(`^tiny$`))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 0 {
		t.Errorf("packageDirs with tiny excluded = %q, want none", dirs)
	}
}

func TestParseMap(t *testing.T) {
	m, err := parseMap("recipes/lock=^TestLock; ./recipes/lock/inner/=^TestInner;*=^TestAll")
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"recipes/lock":       "^TestLock",
		"recipes/lock/inner": "^TestInner",
		"recipes/lock/other": "^TestLock",
		"recipes/lockless":   "^TestAll",
		"recipes":            "^TestAll",
	} {
		if got, err := m.pattern(dir); err != nil || got != want {
			t.Errorf("pattern(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	m, err = parseMap("recipes/lock=^TestLock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.pattern("recipes/queue"); err == nil {
		t.Error("a package with no entry and no * got a pattern")
	}
	for _, bad := range []string{"recipes/lock", "recipes/lock=", "x=("} {
		if _, err := parseMap(bad); err == nil {
			t.Errorf("parseMap(%q) accepted", bad)
		}
	}
	if _, err := parseMap(defaultMap); err != nil {
		t.Errorf("the default map: %v", err)
	}
}

func TestSampleIsDeterministic(t *testing.T) {
	all := fixtureMutants(t)
	ids := func(ms []*Mutant) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	a, b := ids(sample(all, 7, 42)), ids(sample(reversed, 7, 42))
	if len(a) != 7 || !slices.IsSorted(a) {
		t.Fatalf("sample of 7: %q", a)
	}
	if !slices.Equal(a, b) {
		t.Errorf("the same mutants in another order gave another sample:\n%q\n%q", a, b)
	}
	if c := ids(sample(all, 7, 43)); slices.Equal(a, c) {
		t.Errorf("seeds 42 and 43 chose the same sample %q", a)
	}
	// A larger sample with the same seed holds the smaller one.
	if larger := ids(sample(all, 12, 42)); !isSubset(a, larger) {
		t.Errorf("sample of 12 %q does not hold the sample of 7 %q", larger, a)
	}
	if got := sample(all, 0, 1); len(got) != len(all) {
		t.Errorf("sample 0 = %d mutants, want all %d", len(got), len(all))
	}
}

func TestReadEquivalent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eq.txt")
	if err := os.WriteFile(path, []byte("# comment\n\na.go:1:2:negate  same either way\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readEquivalent(path)
	if err != nil || len(got) != 1 || got["a.go:1:2:negate"] != "same either way" {
		t.Errorf("readEquivalent = %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("a.go:1:2:negate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readEquivalent(path); err == nil {
		t.Error("an equivalent mutant without a reason was accepted")
	}
	if got, err := readEquivalent(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("a missing file: %v, %v", got, err)
	}
}

// A key names the mutated line's text, the column in it without its
// indentation and the operator; two mutants of identical lines (the
// fixture's two "if n > max {") are told apart by #2.
func TestKeysOfFixture(t *testing.T) {
	keys := map[string]string{}
	for _, m := range fixtureMutants(t) {
		keys[m.ID] = m.Key
	}
	want := map[string]string{
		"tiny/tiny.go:12:7:cond-boundary": `tiny/tiny.go:cond-boundary:6:"if n < 0 && strict {"`,
		"tiny/tiny.go:13:13:return-nil":   `tiny/tiny.go:return-nil:11:"return 0, ErrNegative"`,
		"tiny/tiny.go:19:8:cond-boundary": `tiny/tiny.go:cond-boundary:6:"if n > max {"`,
		"tiny/tiny.go:27:7:cond-boundary": `tiny/tiny.go:cond-boundary:6:"if n > max {"#2`,
		"tiny/tiny.go:26:2:remove-call":   `tiny/tiny.go:remove-call:1:"note(n)"`,
		"tiny/tiny.go:40:34:int-inc":      `tiny/tiny.go:int-inc:34:"func Second() int { return table[1] }"`,
	}
	for id, k := range want {
		if keys[id] != k {
			t.Errorf("key of %s = %s, want %s", id, keys[id], k)
		}
	}
	seen := map[string]string{}
	for id, k := range keys {
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share the key %s", id, other, k)
		}
		seen[k] = id
	}
}

// Lines added above a mutant change its ID but not its key, and lines
// re-indented (a block wrapped around them) neither.
func TestKeySurvivesEditsAbove(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(fixture, "tiny", "tiny.go"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "func Clamp(", "// One more line of doc.\n\n// And a second.\nfunc Clamp(", 1)
	edited = strings.Replace(edited, "\tnote(n)\n", "\t{\n\t\tnote(n)\n\t}\n", 1)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tiny"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tiny", "tiny.go"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	moved, err := packageMutants(dir, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	orig := fixtureMutants(t)
	if len(moved) != len(orig) {
		t.Fatalf("%d mutants after the edit, want %d", len(moved), len(orig))
	}
	for i, m := range orig {
		if moved[i].Key != m.Key {
			t.Errorf("key of %s became %s after the edit, want %s", m.ID, moved[i].Key, m.Key)
		}
		if moved[i].ID == m.ID {
			t.Errorf("ID %s did not move with its line", m.ID)
		}
	}
}

// The -equivalent file names mutants by key (a quoted line, spaces and
// all, and #n) or by the older positional ID.
func TestReadEquivalentKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eq.txt")
	text := `a.go:negate:6:"if a != b && c == \"x y\" {"  same either way
a.go:negate:6:"if a != b {"#2	the second one
a.go:3:4:logical  an old id
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readEquivalent(path)
	want := map[string]string{
		`a.go:negate:6:"if a != b && c == \"x y\" {"`: "same either way",
		`a.go:negate:6:"if a != b {"#2`:               "the second one",
		"a.go:3:4:logical":                            "an old id",
	}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("readEquivalent = %q, %v; want %q", got, err, want)
	}
	m := &Mutant{ID: "a.go:9:9:negate", Key: `a.go:negate:6:"if a != b {"#2`}
	if r, ok := equivalentOf(got, m); !ok || r != "the second one" {
		t.Errorf("equivalentOf by key = %q, %v", r, ok)
	}
	m = &Mutant{ID: "a.go:3:4:logical", Key: `a.go:logical:1:"x"`}
	if r, ok := equivalentOf(got, m); !ok || r != "an old id" {
		t.Errorf("equivalentOf by id = %q, %v", r, ok)
	}
	for _, bad := range []string{
		`a.go:negate:6:"if a {"  ` + "\n", // no reason
		`a.go:negate:6:"if a {  unterminated` + "\n",
		`a.go:negate:6:"if a {"x  runs on` + "\n",
		`a.go:negate:6:"if a {"  one` + "\n" + `a.go:negate:6:"if a {"  twice` + "\n",
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := readEquivalent(path); err == nil {
			t.Errorf("readEquivalent(%q) = %q, want an error", bad, got)
		}
	}
}

// Every entry of the project's equivalent.txt names a mutant of recipes/
// as it is now: an entry that matches none was left behind by an edit
// of its line and must be reviewed again.
func TestEquivalentListMatchesMutants(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	equiv, err := readEquivalent("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := packageDirs(root, []string{"./recipes/..."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range dirs {
		ms, err := packageMutants(root, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			names[m.Key] = true
		}
	}
	for id := range equiv {
		if !names[id] {
			t.Errorf("equivalent.txt: %s matches no mutant of recipes/ (or is not a key)", id)
		}
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
