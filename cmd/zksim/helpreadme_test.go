package main

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpAgreesWithReadme: "zksim help" and the README's section on the
// command name the same commands and the same exit statuses, and the
// README's table of flags has every flag of zksim, zksim herd and zksim
// explore, under the right command, and no other.
func TestHelpAgreesWithReadme(t *testing.T) {
	var help strings.Builder
	usage(&help)
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, readme, ok := strings.Cut(string(src), "\n## The two commands\n")
	if !ok {
		t.Fatal("README.md has no section on the command")
	}
	readme, _, _ = strings.Cut(readme, "\n## ")

	// The commands.
	_, listed, _ := strings.Cut(help.String(), "commands:\n")
	listed, _, _ = strings.Cut(listed, "\n\n")
	var helpCmds []string
	for _, m := range regexp.MustCompile(`(?m)^  (\w+) `).FindAllStringSubmatch(listed, -1) {
		helpCmds = append(helpCmds, m[1])
	}
	m := regexp.MustCompile("`zksim help` lists the commands \\(([^)]*)\\)").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README does not say which commands zksim help lists")
	}
	var readmeCmds []string
	for _, c := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(m[1], -1) {
		readmeCmds = append(readmeCmds, c[1])
	}
	if !slices.Equal(helpCmds, readmeCmds) || len(helpCmds) != len(commands) {
		t.Errorf("zksim help lists %v, the README %v", helpCmds, readmeCmds)
	}

	// The exit statuses: the README says each in words, after "The exit status".
	_, statuses, ok := strings.Cut(help.String(), "exit status:\n")
	if !ok {
		t.Fatal("zksim help says no exit status")
	}
	_, said, ok := strings.Cut(strings.Join(strings.Fields(readme), " "), "The exit status is ")
	if !ok {
		t.Fatal("the README says no exit status")
	}
	for _, want := range []struct{ code, help, readme string }{
		{"0", "no violation found", "0 when no violation was found"},
		{"1", "a violation found", "1 when one was"},
		{"2", "usage", "2 for a usage error"},
	} {
		if !strings.Contains(statuses, "  "+want.code+"  "+want.help) && !strings.Contains(statuses, "  "+want.code+"  done: "+want.help) {
			t.Errorf("zksim help does not say status %s: %q", want.code, want.help)
		}
		if !strings.Contains(said, want.readme) {
			t.Errorf("the README does not say status %s: %q", want.code, want.readme)
		}
	}

	// The flags, by command.
	want := map[string]string{} // flag -> command column
	names := func(define func(*flag.FlagSet)) []string {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		define(fs)
		var out []string
		fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
		return out
	}
	for _, f := range names(func(fs *flag.FlagSet) { herdFlags(fs, &herdOptions{}) }) {
		want[f] = "`herd`"
	}
	for _, f := range names(func(fs *flag.FlagSet) { exploreFlags(fs, &exploreOptions{}) }) {
		want[f] = "`explore`"
	}
	want["herd"], want["explore"] = "(no command)", "(no command)"
	got := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `-([\\w.]+)[^`]*` \\| ([^|]+) \\|").FindAllStringSubmatch(readme, -1) {
		got[m[1]] = strings.TrimSpace(m[2])
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("flag -%s: the README's table says %q, want %s", f, got[f], c)
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("the README's table names -%s, which zksim does not have", f)
		}
	}
}
