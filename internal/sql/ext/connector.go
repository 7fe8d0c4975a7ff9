package ext

import (
	"regexp"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// The connector statements. The grammar is generic: a connector kind and
// a list of options; each kind checks its own options when the statement
// runs (internal/connectors/spec).
//
//	CREATE SOURCE [IF NOT EXISTS] name FROM kind (option = value [, ...])
//	    [INTO table | INTO SCHEMA schema | FOR TABLES (table [, ...]) | FOR ALL TABLES]
//	CREATE SINK [IF NOT EXISTS] name FROM view INTO kind (option = value [, ...])
//	ALTER SOURCE|SINK name PAUSE|RESUME
//	DROP SOURCE|SINK [IF EXISTS] name
//	SHOW SOURCES | SHOW SINKS
//
// An option's value is a string constant, a number (with an optional
// sign), TRUE/FALSE or an identifier; it is kept as text.

var connectorRe = regexp.MustCompile(`(?is)^\s*(?:CREATE\s+(?:SOURCE|SINK)|ALTER\s+(?:SOURCE|SINK)|DROP\s+(?:SOURCE|SINK)|SHOW\s+(?:SOURCES|SINKS))\b`)

// ConnectorStmt is a parsed connector statement.
type ConnectorStmt struct {
	// Sink is set for sinks, clear for sources.
	Sink bool
	// Name is the source's or sink's name.
	Name string
	// IfNotExists and IfExists are CREATE's and DROP's clauses.
	IfNotExists, IfExists bool
	// Connector is the kind of connector, lower-cased ("kafka",
	// "postgres").
	Connector string
	// Options are the options in the order written; keys lower-cased.
	Options []Option
	// Into is a source's target table, or empty.
	Into string
	// IntoSchema is a source's target schema (INTO SCHEMA s), or empty.
	IntoSchema string
	// ForTables lists a source's tables (FOR TABLES (...)); AllTables is
	// FOR ALL TABLES.
	ForTables []string
	AllTables bool
	// From is a sink's view.
	From string
	// Pause is ALTER's action: true for PAUSE, false for RESUME.
	Pause bool
}

// Option is one connector option.
type Option struct {
	Key, Value string
}

func parseConnector(text string) Statement {
	m := connectorRe.FindStringSubmatch(text)
	if m == nil {
		return Statement{}
	}
	toks, err := lex(text)
	if err != nil {
		return Statement{Kind: CreateConnector, Err: err}
	}
	p := &parser{toks: toks}
	verb := strings.ToLower(p.next().text)
	obj := strings.ToLower(p.next().text)
	c := &ConnectorStmt{Sink: obj == "sink" || obj == "sinks"}
	var kind Kind
	switch verb {
	case "create":
		kind = CreateConnector
		err = p.createConnector(c)
	case "alter":
		kind = AlterConnector
		err = p.alterConnector(c)
	case "drop":
		kind = DropConnector
		err = p.dropConnector(c)
	case "show":
		kind = ShowConnectors
	}
	if err == nil {
		err = p.end()
	}
	return Statement{Kind: kind, Connector: c, Err: err}
}

func (p *parser) end() error {
	if p.peek().kind == tokPunct && p.peek().text == ";" {
		p.next()
	}
	if t := p.peek(); t.kind != tokEOF {
		return p.syntaxError(t)
	}
	return nil
}

func (p *parser) name() (string, error) {
	t := p.next()
	if t.kind != tokIdent {
		return "", p.syntaxError(t)
	}
	return identName(t.text), nil
}

func (p *parser) punct(s string) error {
	t := p.next()
	if t.kind != tokPunct || t.text != s {
		return p.syntaxError(t)
	}
	return nil
}

func (p *parser) createConnector(c *ConnectorStmt) error {
	if p.keyword("if") {
		if !p.keyword("not") || !p.keyword("exists") {
			return p.syntaxError(p.peek())
		}
		c.IfNotExists = true
	}
	var err error
	if c.Name, err = p.name(); err != nil {
		return err
	}
	if !p.keyword("from") {
		return p.syntaxError(p.peek())
	}
	if c.Sink {
		if c.From, err = p.name(); err != nil {
			return err
		}
		if !p.keyword("into") {
			return p.syntaxError(p.peek())
		}
	}
	if c.Connector, err = p.name(); err != nil {
		return err
	}
	if c.Options, err = p.options(); err != nil {
		return err
	}
	if c.Sink {
		return nil
	}
	switch {
	case p.keyword("into"):
		if p.keyword("schema") {
			c.IntoSchema, err = p.name()
		} else {
			c.Into, err = p.name()
		}
		return err
	case p.keyword("for"):
		if p.keyword("all") {
			if !p.keyword("tables") {
				return p.syntaxError(p.peek())
			}
			c.AllTables = true
			return nil
		}
		if !p.keyword("tables") {
			return p.syntaxError(p.peek())
		}
		if err := p.punct("("); err != nil {
			return err
		}
		for {
			n, err := p.name()
			if err != nil {
				return err
			}
			c.ForTables = append(c.ForTables, n)
			if p.peek().kind == tokPunct && p.peek().text == "," {
				p.next()
				continue
			}
			return p.punct(")")
		}
	}
	return nil
}

// options parses ( key = value [, ...] ).
func (p *parser) options() ([]Option, error) {
	if err := p.punct("("); err != nil {
		return nil, err
	}
	var out []Option
	if p.peek().kind == tokPunct && p.peek().text == ")" {
		p.next()
		return out, nil
	}
	for {
		k := p.next()
		if k.kind != tokIdent {
			return nil, p.syntaxError(k)
		}
		key := identName(k.text)
		for _, o := range out {
			if o.Key == key {
				return nil, errs.Newf(errs.SyntaxError, "option %q specified more than once", key)
			}
		}
		if p.peek().kind == tokPunct && p.peek().text == "=" {
			p.next()
		}
		v := p.next()
		sign := ""
		if v.kind == tokPunct && (v.text == "-" || v.text == "+") && p.peek().kind == tokNumber {
			if v.text == "-" {
				sign = "-"
			}
			v = p.next()
		}
		var val string
		switch {
		case v.kind == tokNumber:
			val = sign + v.text
		case v.kind == tokString:
			val = v.text
		case v.kind == tokIdent:
			val = strings.ToLower(v.text)
		default:
			return nil, p.syntaxError(v)
		}
		out = append(out, Option{Key: key, Value: val})
		t := p.next()
		if t.kind == tokPunct && t.text == ")" {
			return out, nil
		}
		if t.kind != tokPunct || t.text != "," {
			return nil, p.syntaxError(t)
		}
	}
}

func (p *parser) alterConnector(c *ConnectorStmt) error {
	var err error
	if c.Name, err = p.name(); err != nil {
		return err
	}
	switch {
	case p.keyword("pause"):
		c.Pause = true
	case p.keyword("resume"):
	default:
		return p.syntaxError(p.peek())
	}
	return nil
}

func (p *parser) dropConnector(c *ConnectorStmt) error {
	if p.keyword("if") {
		if !p.keyword("exists") {
			return p.syntaxError(p.peek())
		}
		c.IfExists = true
	}
	var err error
	c.Name, err = p.name()
	return err
}
