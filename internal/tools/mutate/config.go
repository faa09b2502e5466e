package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// defaultMap sends each recipe package to the property tests of the
// machines that use it (go list -deps): lock and election use the root
// package, contend and hold; every family uses retry and seqnode.
const defaultMap = "recipes=^Test(Lock|Election);" +
	"recipes/lock=^TestLock;" +
	"recipes/election=^TestElection;" +
	"recipes/queue=^TestQueue;" +
	"recipes/barrier=^TestBarrier;" +
	"recipes/internal/contend=^Test(Lock|Election);" +
	"recipes/internal/hold=^Test(Lock|Election);" +
	"recipes/internal/retry=^Test(Lock|Election|Queue|Barrier);" +
	"recipes/internal/seqnode=^Test(Lock|Election|Queue|Barrier);" +
	"*=^Test(Lock|Election|Queue|Barrier)"

// testMap says which tests of the killer run for a mutant of a package.
type testMap struct {
	prefixes []string // longest first
	patterns map[string]string
	fallback string
}

// parseMap parses "pkg=pattern;pkg=pattern;*=pattern". A package matches
// itself and the packages under it; the longest match wins, "*" is the
// fallback.
func parseMap(s string) (*testMap, error) {
	m := &testMap{patterns: map[string]string{}}
	for item := range strings.SplitSeq(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		pkg, pat, ok := strings.Cut(item, "=")
		if !ok || pat == "" {
			return nil, fmt.Errorf("bad -map entry %q: want pkg=pattern", item)
		}
		if _, err := regexp.Compile(pat); err != nil {
			return nil, fmt.Errorf("bad -map pattern %q: %w", pat, err)
		}
		pkg = strings.TrimSuffix(strings.TrimPrefix(pkg, "./"), "/")
		if pkg == "*" {
			m.fallback = pat
			continue
		}
		m.prefixes = append(m.prefixes, pkg)
		m.patterns[pkg] = pat
	}
	slices.SortFunc(m.prefixes, func(a, b string) int { return len(b) - len(a) })
	return m, nil
}

// pattern returns the -test.run pattern for a mutant of package dir.
func (m *testMap) pattern(dir string) (string, error) {
	for _, p := range m.prefixes {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return m.patterns[p], nil
		}
	}
	if m.fallback == "" {
		return "", fmt.Errorf("no -map entry for package %s and no * entry", dir)
	}
	return m.fallback, nil
}

// packageDirs expands the package arguments ("./recipes/...",
// "./recipes/lock") into directories relative to root holding non-test Go
// files, leaving out those exclude matches.
func packageDirs(root string, args []string, exclude *regexp.Regexp) ([]string, error) {
	seen := map[string]bool{}
	var dirs []string
	addDir := func(dir string) error {
		dir = filepath.ToSlash(filepath.Clean(dir))
		if seen[dir] || (exclude != nil && exclude.MatchString(dir)) {
			return nil
		}
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return err
		}
		if slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
		return nil
	}
	for _, a := range args {
		a = strings.TrimPrefix(filepath.ToSlash(a), "./")
		if a == "..." {
			a = "./..."
		}
		base, recursive := strings.CutSuffix(a, "/...")
		if !recursive {
			if err := addDir(a); err != nil {
				return nil, err
			}
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, base), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if name := d.Name(); path != filepath.Join(root, base) && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			return addDir(rel)
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}

// readEquivalent reads a file of equivalent mutants: one mutant and a
// reason per line, # starting a comment. A mutant is named by its Key
// (file:operator:column:"line"[#n], as -list prints it), which survives
// edits above it, or by its positional ID (file:line:col:operator). A
// missing file is an empty list.
func readEquivalent(path string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, err := cutEquivalent(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: equivalent mutant %s has no reason", path, n, id)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s:%d: equivalent mutant %s listed twice", path, n, id)
		}
		out[id] = reason
	}
	return out, sc.Err()
}

// cutEquivalent splits a line of the -equivalent file into the mutant's
// key or ID and the reason.
func cutEquivalent(line string) (id, reason string, err error) {
	q := strings.IndexByte(line, '"')
	if sp := strings.IndexAny(line, " \t"); q < 0 || (sp >= 0 && sp < q) {
		id, reason, _ = strings.Cut(line, " ")
		return id, strings.TrimSpace(reason), nil
	}
	text, err := strconv.QuotedPrefix(line[q:])
	if err != nil {
		return "", "", fmt.Errorf("bad quoted line in key %q: %w", line, err)
	}
	rest := line[q+len(text):]
	occ := ""
	if strings.HasPrefix(rest, "#") {
		end := 1
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		occ, rest = rest[:end], rest[end:]
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", fmt.Errorf("key %q runs on into %q", line[:q+len(text)], rest)
	}
	return line[:q] + text + occ, strings.TrimSpace(rest), nil
}

// equivalentOf returns the reason equiv gives for m, by its key or its
// ID, and whether it lists m.
func equivalentOf(equiv map[string]string, m *Mutant) (string, bool) {
	if r, ok := equiv[m.Key]; ok && m.Key != "" {
		return r, true
	}
	r, ok := equiv[m.ID]
	return r, ok
}

// sample returns n of the mutants chosen by seed, in id order; all of them
// if n <= 0 or n >= len(ms). The same mutants and seed give the same
// sample.
func sample(ms []*Mutant, n int, seed uint64) []*Mutant {
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b *Mutant) int { return strings.Compare(a.ID, b.ID) })
	if n <= 0 || n >= len(sorted) {
		return sorted
	}
	r := rand.New(rand.NewPCG(seed, 0x6d7574616e74))
	idx := r.Perm(len(sorted))[:n]
	slices.Sort(idx)
	out := make([]*Mutant, n)
	for i, j := range idx {
		out[i] = sorted[j]
	}
	return out
}
