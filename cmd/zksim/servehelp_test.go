package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zksim/zksim/zkwire"
)

// TestServeHelpAgreesWithReadme: "zksim serve -h" prints to stdout, and it
// and the README's section on zksim serve name the same flags and the same
// control routes.
func TestServeHelpAgreesWithReadme(t *testing.T) {
	var stdout, stderr strings.Builder
	if err := serve(context.Background(), []string{"-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve -h = %v", err)
	}
	help := stdout.String()
	if stderr.Len() != 0 || !strings.HasPrefix(help, "usage: zksim serve") {
		t.Fatalf("serve -h: stdout %q, stderr %q; want the usage on stdout only", help, stderr.String())
	}
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, readme, ok := strings.Cut(string(src), "\n## Use zksim from any language\n")
	if !ok {
		t.Fatal("README.md has no section on zksim serve")
	}
	readme, _, _ = strings.Cut(readme, "\n## ")

	helpFlags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(help, -1) {
		helpFlags[m[1]] = true
	}
	readmeFlags := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `-(\\S+)` \\|").FindAllStringSubmatch(readme, -1) {
		readmeFlags[m[1]] = true
	}
	if len(helpFlags) < 10 {
		t.Fatalf("serve -h lists %d flags:\n%s", len(helpFlags), help)
	}
	for f := range helpFlags {
		if !readmeFlags[f] {
			t.Errorf("flag -%s is not in the README's table of flags", f)
		}
	}
	for f := range readmeFlags {
		if !helpFlags[f] {
			t.Errorf("the README's table names -%s, which zksim serve does not have", f)
		}
	}

	routes := regexp.MustCompile(`(?m)^(GET|POST) +(\S+)`)
	helpRoutes := map[string]bool{}
	for _, m := range routes.FindAllStringSubmatch(zkwire.ControlRoutes(), -1) {
		helpRoutes[m[1]+" "+m[2]] = true
	}
	if !strings.Contains(help, zkwire.ControlRoutes()) {
		t.Errorf("serve -h does not list the control routes")
	}
	readmeRoutes := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `((?:GET|POST) \\S+)` \\|").FindAllStringSubmatch(readme, -1) {
		readmeRoutes[m[1]] = true
	}
	for r := range helpRoutes {
		if !readmeRoutes[r] {
			t.Errorf("route %s is not in the README's table of routes", r)
		}
	}
	for r := range readmeRoutes {
		if !helpRoutes[r] {
			t.Errorf("the README's table names route %s, which the control endpoint does not have", r)
		}
	}
}
