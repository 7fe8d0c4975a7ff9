package types

// The volatility of the catalog's functions, as pg_proc.provolatile has
// it: stable ('s') where the result may depend on session settings
// (formatting and time-zone dependent functions), immutable otherwise.
// This file's init runs after every other of the catalog (files
// initialize in name order), so every overload is registered by then.

func init() {
	for _, name := range []string{"to_char", "to_date", "make_timestamptz", "convert", "convert_from", "convert_to"} {
		for _, d := range functions[name] {
			d.stable = true
		}
	}
	for _, d := range functions["to_timestamp"] {
		if len(d.args) == 2 {
			d.stable = true
		}
	}
	for _, name := range []string{"date_trunc", "date_part", "extract"} {
		for _, d := range functions[name] {
			for _, a := range d.args {
				if a == TimestampTZ {
					d.stable = true
				}
			}
		}
	}
}
