package copyfmt

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// Format is a COPY data format.
type Format uint8

const (
	// Text is PostgreSQL's default tab-separated format with backslash
	// escapes.
	Text Format = iota
	// CSV is comma-separated values with quoting.
	CSV
	// Binary is PostgreSQL's binary COPY format.
	Binary
)

func (f Format) String() string {
	switch f {
	case CSV:
		return "csv"
	case Binary:
		return "binary"
	}
	return "text"
}

// Header says what the first line of text or CSV data is.
type Header uint8

const (
	// NoHeader: the first line is data.
	NoHeader Header = iota
	// HeaderLine: the first line holds column names; COPY TO writes it,
	// COPY FROM skips it.
	HeaderLine
	// HeaderMatch: COPY FROM checks that the first line names the
	// columns, in order.
	HeaderMatch
)

// Column is one column of the data: its name (for headers and error
// context) and type (for parsing and formatting values).
type Column struct {
	Name string
	Type types.Type
}

// Options are a COPY statement's data options. The zero value is the text
// format with its defaults once Normalize has run.
type Options struct {
	Format Format
	// Delimiter separates columns: tab in text, comma in CSV.
	Delimiter byte
	// Null is the text of a NULL: `\N` in text, empty in CSV.
	Null string
	// Header is whether there is a header line (text and CSV).
	Header Header
	// Quote and Escape are CSV's quoting characters; Escape defaults to
	// Quote.
	Quote, Escape byte
	// ForceQuoteAll quotes every non-NULL value (FORCE_QUOTE *).
	ForceQuoteAll bool
	// ForceQuote, ForceNotNull and ForceNull are per column, indexed like
	// the columns; nil means none.
	ForceQuote, ForceNotNull, ForceNull []bool

	// Zone is the session time zone timestamptz text is read and
	// written in (not a COPY option; the binary format is an instant).
	Zone types.Zone

	// Set records which options a statement gave explicitly, for the
	// checks that depend on it (a DELIMITER in binary mode is an error).
	Set OptionSet
}

// OptionSet records the options given explicitly.
type OptionSet struct {
	Delimiter, Null, Quote, Escape, Header      bool
	ForceQuote, ForceNotNull, ForceNull, Format bool
}

// Normalize fills in the defaults of the options not given and checks the
// combination as PostgreSQL's ProcessCopyOptions does. from is true for
// COPY FROM.
func (o *Options) Normalize(from bool) error {
	if o.Format == Binary {
		switch {
		case o.Set.Delimiter:
			return errs.New(errs.SyntaxError, "cannot specify DELIMITER in BINARY mode")
		case o.Set.Null:
			return errs.New(errs.SyntaxError, "cannot specify NULL in BINARY mode")
		case o.Set.Header:
			return errs.New(errs.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
		}
	}
	csv := o.Format == CSV
	if !o.Set.Delimiter {
		o.Delimiter = '\t'
		if csv {
			o.Delimiter = ','
		}
	}
	if !o.Set.Null {
		o.Null = `\N`
		if csv {
			o.Null = ""
		}
	}
	if csv {
		if !o.Set.Quote {
			o.Quote = '"'
		}
		if !o.Set.Escape {
			o.Escape = o.Quote
		}
	}
	if o.Delimiter == '\n' || o.Delimiter == '\r' {
		return errs.New(errs.InvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
	}
	if strings.ContainsAny(o.Null, "\r\n") {
		return errs.New(errs.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
	}
	if !csv && o.Format != Binary && strings.IndexByte(`\.abcdefghijklmnopqrstuvwxyz0123456789`, o.Delimiter) >= 0 {
		return errs.Newf(errs.InvalidParameterValue, `COPY delimiter cannot be "%c"`, o.Delimiter)
	}
	if !from && o.Header == HeaderMatch {
		return errs.New(errs.FeatureNotSupported, `cannot use "match" with HEADER in COPY TO`)
	}
	if !csv && o.Set.Quote {
		return errs.New(errs.FeatureNotSupported, "COPY quote available only in CSV mode")
	}
	if csv && o.Delimiter == o.Quote {
		return errs.New(errs.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if !csv && o.Set.Escape {
		return errs.New(errs.FeatureNotSupported, "COPY escape available only in CSV mode")
	}
	if o.Set.ForceQuote {
		if !csv {
			return errs.New(errs.FeatureNotSupported, "COPY force quote available only in CSV mode")
		}
		if from {
			return errs.New(errs.FeatureNotSupported, "COPY force quote only available using COPY TO")
		}
	}
	if o.Set.ForceNotNull {
		if !csv {
			return errs.New(errs.FeatureNotSupported, "COPY force not null available only in CSV mode")
		}
		if !from {
			return errs.New(errs.FeatureNotSupported, "COPY force not null only available using COPY FROM")
		}
	}
	if o.Set.ForceNull {
		if !csv {
			return errs.New(errs.FeatureNotSupported, "COPY force null available only in CSV mode")
		}
		if !from {
			return errs.New(errs.FeatureNotSupported, "COPY force null only available using COPY FROM")
		}
	}
	if o.Format != Binary && strings.IndexByte(o.Null, o.Delimiter) >= 0 {
		return errs.New(errs.FeatureNotSupported, "COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.IndexByte(o.Null, o.Quote) >= 0 {
		return errs.New(errs.FeatureNotSupported, "CSV quote character must not appear in the NULL specification")
	}
	return nil
}
