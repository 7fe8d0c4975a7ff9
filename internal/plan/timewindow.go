package plan

// TimeWindow assigns each input row to the event-time windows that contain
// its time column, TUMBLE(table, col, size) and HOP(table, col, slide,
// size) in FROM. Windows are aligned to the Unix epoch: a window starts at
// a multiple of Slide since 1970-01-01 00:00:00 and covers
// [start, start + Size). A tumbling window has Slide == Size, so each row
// is in exactly one window (a map); a hopping window is a flat map to the
// Size/Slide windows containing the row. Rows whose time column is NULL
// are in no window.
//
// The output is the input's columns followed by window_start and
// window_end, typed as the time column (timestamp or timestamptz).
type TimeWindow struct {
	Input Node
	// Func is "tumble" or "hop".
	Func string
	// TimeCol is the index of the time column in Input's row.
	TimeCol int
	// Slide and Size are the window's slide and size in microseconds;
	// Size is a positive multiple of Slide.
	Slide, Size int64
	Cols        []Column
}

func (n *TimeWindow) Columns() []Column { return n.Cols }
func (n *TimeWindow) Inputs() []Node    { return []Node{n.Input} }
