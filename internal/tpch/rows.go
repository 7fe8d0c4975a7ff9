package tpch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Decimal is a DECIMAL(15,2) value in hundredths: 1234 is 12.34.
type Decimal int64

// String formats d as PostgreSQL prints a numeric(15,2): "12.34", "-0.50".
func (d Decimal) String() string {
	sign := ""
	v := int64(d)
	if v < 0 {
		sign, v = "-", -v
	}
	return sign + strconv.FormatInt(v/100, 10) + "." + strconv.FormatInt(100+v%100, 10)[1:]
}

// Date is a DATE as a count of days since 1970-01-01.
type Date int32

// epoch is day 0 of Date.
var epoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// MakeDate returns the Date of a calendar day.
func MakeDate(year int, month time.Month, day int) Date {
	return Date(time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Sub(epoch) / (24 * time.Hour))
}

// String formats d as ISO 8601 (YYYY-MM-DD).
func (d Date) String() string {
	return epoch.AddDate(0, 0, int(d)).Format(time.DateOnly)
}

// The rows of the eight tables. Field order is column order.
type (
	// Region is a row of REGION.
	Region struct {
		RegionKey int
		Name      string
		Comment   string
	}
	// Nation is a row of NATION.
	Nation struct {
		NationKey int
		Name      string
		RegionKey int
		Comment   string
	}
	// Part is a row of PART.
	Part struct {
		PartKey     int
		Name        string
		Mfgr        string
		Brand       string
		Type        string
		Size        int
		Container   string
		RetailPrice Decimal
		Comment     string
	}
	// Supplier is a row of SUPPLIER.
	Supplier struct {
		SuppKey   int
		Name      string
		Address   string
		NationKey int
		Phone     string
		AcctBal   Decimal
		Comment   string
	}
	// PartSupp is a row of PARTSUPP.
	PartSupp struct {
		PartKey    int
		SuppKey    int
		AvailQty   int
		SupplyCost Decimal
		Comment    string
	}
	// Customer is a row of CUSTOMER.
	Customer struct {
		CustKey    int
		Name       string
		Address    string
		NationKey  int
		Phone      string
		AcctBal    Decimal
		MktSegment string
		Comment    string
	}
	// Order is a row of ORDERS.
	Order struct {
		OrderKey      int
		CustKey       int
		OrderStatus   string
		TotalPrice    Decimal
		OrderDate     Date
		OrderPriority string
		Clerk         string
		ShipPriority  int
		Comment       string
	}
	// LineItem is a row of LINEITEM.
	LineItem struct {
		OrderKey      int
		PartKey       int
		SuppKey       int
		LineNumber    int
		Quantity      Decimal
		ExtendedPrice Decimal
		Discount      Decimal
		Tax           Decimal
		ReturnFlag    string
		LineStatus    string
		ShipDate      Date
		CommitDate    Date
		ReceiptDate   Date
		ShipInstruct  string
		ShipMode      string
		Comment       string
	}
)

// Row is anything the generator produces as a table row: it writes
// itself as the parenthesized SQL literals of an INSERT's VALUES list.
type Row interface {
	appendValues(b *strings.Builder)
}

func (r Region) appendValues(b *strings.Builder) {
	values(b, r.RegionKey, r.Name, r.Comment)
}

func (r Nation) appendValues(b *strings.Builder) {
	values(b, r.NationKey, r.Name, r.RegionKey, r.Comment)
}

func (r Part) appendValues(b *strings.Builder) {
	values(b, r.PartKey, r.Name, r.Mfgr, r.Brand, r.Type, r.Size, r.Container, r.RetailPrice, r.Comment)
}

func (r Supplier) appendValues(b *strings.Builder) {
	values(b, r.SuppKey, r.Name, r.Address, r.NationKey, r.Phone, r.AcctBal, r.Comment)
}

func (r PartSupp) appendValues(b *strings.Builder) {
	values(b, r.PartKey, r.SuppKey, r.AvailQty, r.SupplyCost, r.Comment)
}

func (r Customer) appendValues(b *strings.Builder) {
	values(b, r.CustKey, r.Name, r.Address, r.NationKey, r.Phone, r.AcctBal, r.MktSegment, r.Comment)
}

func (r Order) appendValues(b *strings.Builder) {
	values(b, r.OrderKey, r.CustKey, r.OrderStatus, r.TotalPrice, r.OrderDate, r.OrderPriority,
		r.Clerk, r.ShipPriority, r.Comment)
}

func (r LineItem) appendValues(b *strings.Builder) {
	values(b, r.OrderKey, r.PartKey, r.SuppKey, r.LineNumber, r.Quantity, r.ExtendedPrice,
		r.Discount, r.Tax, r.ReturnFlag, r.LineStatus, r.ShipDate, r.CommitDate, r.ReceiptDate,
		r.ShipInstruct, r.ShipMode, r.Comment)
}

// values writes one parenthesized row of SQL literals.
func values(b *strings.Builder, vals ...any) {
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		switch v := v.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case Decimal:
			b.WriteString(v.String())
		case string:
			quote(b, v)
		case Date:
			b.WriteString("DATE '" + v.String() + "'")
		default:
			panic(fmt.Sprintf("tpch: no SQL literal for %T", v))
		}
	}
	b.WriteByte(')')
}

// quote writes s as a standard-conforming string literal.
func quote(b *strings.Builder, s string) {
	b.WriteByte('\'')
	b.WriteString(strings.ReplaceAll(s, "'", "''"))
	b.WriteByte('\'')
}

// maxRowsPerInsert bounds the rows of one INSERT statement.
const maxRowsPerInsert = 500

// InsertStatements returns INSERT statements that add rows to table, at
// most maxRowsPerInsert rows each.
func InsertStatements[R Row](table string, rows []R) []string {
	var out []string
	for start := 0; start < len(rows); start += maxRowsPerInsert {
		end := min(start+maxRowsPerInsert, len(rows))
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " VALUES ")
		for i, r := range rows[start:end] {
			if i > 0 {
				b.WriteString(", ")
			}
			r.appendValues(&b)
		}
		out = append(out, b.String())
	}
	return out
}
