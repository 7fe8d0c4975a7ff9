package types

import "testing"

func TestOracleToCharInterval(t *testing.T) {
	formats := []string{"HH24:MI:SS", "HH:MI:SS", "HH12 AM am A.M. p.m.", "HH24:MI:SS.MS.US", "FF1 FF2 FF3 FF4 FF5 FF6",
		"SSSS SSSSS", "DD DDD W WW", "MM Q", "YYYY YYY YY Y Y,YYY", "CC FMCC", "RM rm FMRM FMrm", "FMHH24:FMMI:FMSS",
		"FMHH FMHH12 FMDD FMDDD FMMM FMYYYY FMYYY FMYY FMWW", "HH24th MIth SSth DDth MMTH YYYYth", "\"days:\" DD \"hours\" HH24",
		"YYYY-MM-DD HH24:MI:SS", "Month", "Mon", "Day", "DY", "D", "ID", "TZ", "tz", "OF", "TZH", "TZM", "AD", "bc", "month",
		"IYYY", "IW", "IDDD", "J", "FX HH24", "x", ""}
	intervals := []string{"0", "1 second", "15 hours 2 minutes 12.345678 seconds", "-15 hours -2 minutes -12.345678 seconds",
		"12 hours", "-12 hours", "25 hours", "100000 hours", "3 days 4 hours", "-3 days", "1 month", "11 months", "12 months",
		"-1 month", "-11 months", "-13 months", "1 year 2 months 3 days 4:05:06.789", "-1 year -2 months", "250 years",
		"-250 years", "12345 years 7 months", "1 mon -1 day", "1 day -1 second", "-0.5 seconds", "0.000001 seconds",
		"40 days", "178000000 years", "-178000000 years", "2147483647 hours"}
	var cases []ex
	for _, f := range formats {
		for _, s := range intervals {
			cases = append(cases, fn("to_char", iv(s), txt(f)))
		}
	}
	cases = append(cases, fn("to_char", n("interval"), txt("HH")), fn("to_char", iv("1 hour"), n("text")),
		fn("to_char", iv("1 hour"), u("HH24")))
	// Only the four ISO-calendar and Julian-day templates are refused.
	if refused := checkRefusable(t, cases); refused != 4*len(intervals) {
		t.Errorf("%d cases refused, want %d", refused, 4*len(intervals))
	}
}
