package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mutant is one small change to one source file.
type Mutant struct {
	// ID is file:line:col:operator, file relative to the module root.
	ID string `json:"id"`
	// Pkg is the package directory relative to the module root.
	Pkg  string `json:"pkg"`
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Op   string `json:"op"`
	// Desc says what the change does, e.g. "< -> <=".
	Desc string `json:"desc"`
	// Key names the mutant by what it changes rather than where:
	// file:operator:column:"line", the column counted in the line with its
	// indentation trimmed and the line's trimmed text quoted as Go does,
	// with #n appended for the nth mutant of a file with the same key (a
	// line repeated in the file). Unlike ID it survives lines added or
	// removed above the mutant; an edit of the line itself changes it.
	Key   string `json:"key,omitempty"`
	edits []edit
}

// edit replaces the bytes [off, end) of a file with text.
type edit struct {
	off, end int
	text     string
}

// apply returns src with m's edits made.
func (m *Mutant) apply(src []byte) []byte {
	es := slices.Clone(m.edits)
	slices.SortFunc(es, func(a, b edit) int { return b.off - a.off })
	out := slices.Clone(src)
	for _, e := range es {
		out = slices.Concat(out[:e.off], []byte(e.text), out[e.end:])
	}
	return out
}

// generator collects the mutants of one file.
type generator struct {
	fset *token.FileSet
	src  []byte
	pkg  string
	file string // relative to the module root
	out  []*Mutant
}

// fileMutants returns the mutants of the Go file at path; rel is its path
// relative to the module root and pkg its package directory.
func fileMutants(path, rel, pkg string) ([]*Mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	g := &generator{fset: fset, src: src, pkg: pkg, file: rel}
	ast.Inspect(f, g.visit)
	slices.SortStableFunc(g.out, func(a, b *Mutant) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Col != b.Col {
			return a.Col - b.Col
		}
		return strings.Compare(a.Op, b.Op)
	})
	numberKeys(g.out)
	return g.out, nil
}

// add records a mutant at pos.
func (g *generator) add(pos token.Pos, op, desc string, edits ...edit) {
	p := g.fset.Position(pos)
	g.out = append(g.out, &Mutant{
		ID:   fmt.Sprintf("%s:%d:%d:%s", g.file, p.Line, p.Column, op),
		Pkg:  g.pkg,
		File: g.file,
		Line: p.Line, Col: p.Column,
		Op: op, Desc: desc,
		Key:   g.key(p.Offset, op),
		edits: edits,
	})
}

// key is the Key of a mutant at byte offset off (without its #n, which
// fileMutants adds): the file, the operator, the column in the trimmed
// line and the trimmed line.
func (g *generator) key(off int, op string) string {
	start := bytes.LastIndexByte(g.src[:off], '\n') + 1
	end := len(g.src)
	if i := bytes.IndexByte(g.src[off:], '\n'); i >= 0 {
		end = off + i
	}
	line := g.src[start:end]
	indent := len(line) - len(bytes.TrimLeft(line, " \t"))
	text := strings.TrimSpace(string(line))
	return fmt.Sprintf("%s:%s:%d:%s", g.file, op, off-start-indent+1, strconv.Quote(text))
}

// numberKeys appends #n to the key of the nth mutant (n > 1) of ms that
// shares its key with earlier ones, in ms's order.
func numberKeys(ms []*Mutant) {
	seen := map[string]int{}
	for _, m := range ms {
		seen[m.Key]++
		if n := seen[m.Key]; n > 1 {
			m.Key = fmt.Sprintf("%s#%d", m.Key, n)
		}
	}
}

func (g *generator) off(pos token.Pos) int { return g.fset.Position(pos).Offset }

// text is the source of n.
func (g *generator) text(n ast.Node) string { return string(g.src[g.off(n.Pos()):g.off(n.End())]) }

// replace returns the edit replacing n with text.
func (g *generator) replace(n ast.Node, text string) edit {
	return edit{g.off(n.Pos()), g.off(n.End()), text}
}

var swaps = map[token.Token]struct {
	to token.Token
	op string
}{
	token.LSS:  {token.LEQ, "cond-boundary"},
	token.LEQ:  {token.LSS, "cond-boundary"},
	token.GTR:  {token.GEQ, "cond-boundary"},
	token.GEQ:  {token.GTR, "cond-boundary"},
	token.EQL:  {token.NEQ, "negate"},
	token.NEQ:  {token.EQL, "negate"},
	token.LAND: {token.LOR, "logical"},
	token.LOR:  {token.LAND, "logical"},
}

func (g *generator) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GenDecl:
		// Leave imports alone; constants and variables are fair game.
		return n.Tok != token.IMPORT
	case *ast.BinaryExpr:
		if s, ok := swaps[n.Op]; ok {
			off := g.off(n.OpPos)
			g.add(n.OpPos, s.op, fmt.Sprintf("%s -> %s", n.Op, s.to),
				edit{off, off + len(n.Op.String()), s.to.String()})
		}
	case *ast.IfStmt:
		if isErrCheck(n.Cond) {
			g.add(n.Cond.Pos(), "if-err-false", fmt.Sprintf("if %s -> never taken", g.text(n.Cond)),
				g.replace(n.Cond, "("+g.text(n.Cond)+") && false"))
		}
	case *ast.ReturnStmt:
		for _, r := range n.Results {
			if isErrValue(r) {
				g.add(r.Pos(), "return-nil", fmt.Sprintf("return %s -> return nil", g.text(r)), g.replace(r, "nil"))
			}
		}
	case *ast.ExprStmt:
		if _, ok := n.X.(*ast.CallExpr); ok {
			g.add(n.Pos(), "remove-call", fmt.Sprintf("remove %s", oneLine(g.text(n))), g.replace(n, ""))
		}
	case *ast.DeferStmt:
		g.add(n.Pos(), "remove-call", fmt.Sprintf("remove %s", oneLine(g.text(n))), g.replace(n, ""))
	case *ast.BranchStmt:
		switch n.Tok {
		case token.BREAK, token.CONTINUE:
			to := token.CONTINUE
			if n.Tok == token.CONTINUE {
				to = token.BREAK
			}
			off := g.off(n.Pos())
			g.add(n.Pos(), "branch-swap", fmt.Sprintf("%s -> %s", n.Tok, to),
				edit{off, off + len(n.Tok.String()), to.String()})
		}
	case *ast.BasicLit:
		if n.Kind != token.INT {
			break
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			break
		}
		g.add(n.Pos(), "int-inc", fmt.Sprintf("%s -> %d", n.Value, v+1), g.replace(n, strconv.FormatInt(v+1, 10)))
		if v > 0 {
			g.add(n.Pos(), "int-dec", fmt.Sprintf("%s -> %d", n.Value, v-1), g.replace(n, strconv.FormatInt(v-1, 10)))
		}
	}
	return true
}

// oneLine shortens a statement's text for a description.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// isErrName reports whether name looks like an error variable or sentinel:
// err, ctxErr, errFoo, ErrFoo.
func isErrName(name string) bool {
	return name == "err" || strings.HasSuffix(name, "Err") || strings.HasPrefix(name, "Err") ||
		(strings.HasPrefix(name, "err") && len(name) > 3 && name[3] >= 'A' && name[3] <= 'Z')
}

// isErrCheck reports whether cond is "x != nil" with x an error variable.
func isErrCheck(cond ast.Expr) bool {
	b, ok := cond.(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return false
	}
	if id, ok := b.Y.(*ast.Ident); !ok || id.Name != "nil" {
		return false
	}
	id, ok := b.X.(*ast.Ident)
	return ok && isErrName(id.Name)
}

// isErrValue reports whether e, a returned value, looks like a non-nil
// error: an error variable or sentinel, fmt.Errorf(...), errors.New(...),
// errors.Join(...), x.Err().
func isErrValue(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return isErrName(e.Name)
	case *ast.SelectorExpr:
		return strings.HasPrefix(e.Sel.Name, "Err")
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			switch x.Name + "." + sel.Sel.Name {
			case "fmt.Errorf", "errors.New", "errors.Join":
				return true
			}
		}
		return sel.Sel.Name == "Err" && len(e.Args) == 0
	}
	return false
}

// packageMutants returns the mutants of the non-test Go files of the
// package in dir (relative to root).
func packageMutants(root, dir string) ([]*Mutant, error) {
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []*Mutant
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		ms, err := fileMutants(f, filepath.ToSlash(rel), filepath.ToSlash(dir))
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}
