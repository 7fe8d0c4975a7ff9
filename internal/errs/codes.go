package errs

// The RS codes. Each maps to exactly one SQLSTATE in sqlstates; keep the two
// lists in the same order and document every code in docs/errors.md.
const (
	FeatureNotSupported      Code = "RS0A000" // 0A000: SQL outside the supported set
	SyntaxError              Code = "RS42601" // 42601
	UndefinedTable           Code = "RS42P01" // 42P01
	UndefinedColumn          Code = "RS42703" // 42703
	UndefinedFunction        Code = "RS42883" // 42883
	AmbiguousColumn          Code = "RS42702" // 42702
	DuplicateTable           Code = "RS42P07" // 42P07
	DuplicateColumn          Code = "RS42701" // 42701
	DatatypeMismatch         Code = "RS42804" // 42804
	UndefinedObject          Code = "RS42704" // 42704
	WrongObjectType          Code = "RS42809" // 42809
	GroupingError            Code = "RS42803" // 42803
	InvalidColumnRef         Code = "RS42P10" // 42P10
	DependentObjects         Code = "RS2BP01" // 2BP01
	NotNullViolation         Code = "RS23502" // 23502
	UniqueViolation          Code = "RS23505" // 23505
	NumericOutOfRange        Code = "RS22003" // 22003
	DivisionByZero           Code = "RS22012" // 22012
	InvalidTextRep           Code = "RS22P02" // 22P02
	InvalidDatetimeFormat    Code = "RS22007" // 22007
	DatetimeOverflow         Code = "RS22008" // 22008
	StringTooLong            Code = "RS22001" // 22001
	CardinalityViolation     Code = "RS21000" // 21000
	InvalidParameterValue    Code = "RS22023" // 22023
	CannotCoerce             Code = "RS42846" // 42846
	InFailedTransaction      Code = "RS25P02" // 25P02
	ActiveTransaction        Code = "RS25001" // 25001
	NoActiveTransaction      Code = "RS25P01" // 25P01
	SerializationFailure     Code = "RS40001" // 40001
	InvalidSavepoint         Code = "RS3B001" // 3B001
	ProgramLimitExceeded     Code = "RS54000" // 54000
	StatementTooComplex      Code = "RS54001" // 54001
	TooManyColumns           Code = "RS54011" // 54011
	TooManyArguments         Code = "RS54023" // 54023
	DuplicateAlias           Code = "RS42712" // 42712
	IndeterminateDatatype    Code = "RS42P18" // 42P18
	InvalidLimitCount        Code = "RS2201W" // 2201W
	InvalidOffsetCount       Code = "RS2201X" // 2201X
	InvalidObjectDef         Code = "RS42P17" // 42P17
	InvalidTimeZone          Code = "RS22009" // 22009
	IntervalFieldOverflow    Code = "RS22015" // 22015
	AmbiguousFunction        Code = "RS42725" // 42725
	AdminShutdown            Code = "RS57P01" // 57P01
	IOError                  Code = "RS58030" // 58030
	DataCorrupted            Code = "RSXX001" // XX001
	WindowingError           Code = "RS42P20" // 42P20
	InvalidWindowFrame       Code = "RS22013" // 22013
	InvalidNtileArgument     Code = "RS22014" // 22014
	InvalidNthArgument       Code = "RS22016" // 22016
	NullValueNotAllowed      Code = "RS22004" // 22004
	SubstringError           Code = "RS22011" // 22011
	InvalidEscapeSequence    Code = "RS22025" // 22025
	InvalidArgumentForLog    Code = "RS2201E" // 2201E
	InvalidArgumentForPow    Code = "RS2201F" // 2201F
	InvalidWidthBucket       Code = "RS2201G" // 2201G
	InvalidRecursion         Code = "RS42P19" // 42P19
	InvalidBinaryRep         Code = "RS22P03" // 22P03
	CharacterNotInRepertoire Code = "RS22021" // 22021
	UntranslatableCharacter  Code = "RS22P05" // 22P05
	ProtocolViolation        Code = "RS08P01" // 08P01
	PrerequisiteState        Code = "RS55000" // 55000
	ArraySubscriptError      Code = "RS2202E" // 2202E
	DataException            Code = "RS22000" // 22000
	InvalidRegex             Code = "RS2201B" // 2201B
	InvalidSchemaName        Code = "RS3F000" // 3F000
	BadCopyFileFormat        Code = "RS22P04" // 22P04
	ReadOnlyTransaction      Code = "RS25006" // 25006
	InvalidCursorName        Code = "RS34000" // 34000
	DuplicateCursor          Code = "RS42P03" // 42P03
	QueryCanceled            Code = "RS57014" // 57014
	InvalidAuthorization     Code = "RS28000" // 28000
	InvalidPassword          Code = "RS28P01" // 28P01
	TooManyConnections       Code = "RS53300" // 53300
	DiskFull                 Code = "RS53100" // 53100
	CommitOutcomeUnknown     Code = "RS08007" // 08007: a commit whose log fsync failed
	OutOfMemory              Code = "RS53200" // 53200
	TempFileLimit            Code = "RS53400" // 53400
	IdleInTxnTimeout         Code = "RS25P03" // 25P03
	DuplicateObject          Code = "RS42710" // 42710
	InvalidStatementName     Code = "RS26000" // 26000
	DuplicatePrepared        Code = "RS42P05" // 42P05
	Internal                 Code = "RSXX000" // XX000
	InvalidEscapeCharUse     Code = "RS2200C" // 2200C
	InsufficientPrivilege    Code = "RS42501" // 42501
	InvalidGrantOperation    Code = "RS0LP01" // 0LP01
	ObjectInUse              Code = "RS55006" // 55006
	InvalidFunctionDef       Code = "RS42P13" // 42P13
	DuplicateFunction        Code = "RS42723" // 42723
	UndefinedParameter       Code = "RS42P02" // 42P02
	InvalidTableDefinition   Code = "RS42P16" // 42P16
	DuplicateSchema          Code = "RS42P06" // 42P06
	ReservedName             Code = "RS42939" // 42939
	InvalidCatalogName       Code = "RS3D000" // 3D000
)

var sqlstates = map[Code]string{
	FeatureNotSupported:      "0A000",
	SyntaxError:              "42601",
	UndefinedTable:           "42P01",
	UndefinedColumn:          "42703",
	UndefinedFunction:        "42883",
	AmbiguousColumn:          "42702",
	DuplicateTable:           "42P07",
	DuplicateColumn:          "42701",
	DatatypeMismatch:         "42804",
	UndefinedObject:          "42704",
	WrongObjectType:          "42809",
	GroupingError:            "42803",
	InvalidColumnRef:         "42P10",
	DependentObjects:         "2BP01",
	NotNullViolation:         "23502",
	UniqueViolation:          "23505",
	NumericOutOfRange:        "22003",
	DivisionByZero:           "22012",
	InvalidTextRep:           "22P02",
	InvalidDatetimeFormat:    "22007",
	DatetimeOverflow:         "22008",
	StringTooLong:            "22001",
	CardinalityViolation:     "21000",
	InvalidParameterValue:    "22023",
	CannotCoerce:             "42846",
	InFailedTransaction:      "25P02",
	ActiveTransaction:        "25001",
	NoActiveTransaction:      "25P01",
	SerializationFailure:     "40001",
	InvalidSavepoint:         "3B001",
	ProgramLimitExceeded:     "54000",
	StatementTooComplex:      "54001",
	TooManyColumns:           "54011",
	TooManyArguments:         "54023",
	DuplicateAlias:           "42712",
	IndeterminateDatatype:    "42P18",
	InvalidLimitCount:        "2201W",
	InvalidOffsetCount:       "2201X",
	InvalidObjectDef:         "42P17",
	InvalidTimeZone:          "22009",
	IntervalFieldOverflow:    "22015",
	AmbiguousFunction:        "42725",
	AdminShutdown:            "57P01",
	IOError:                  "58030",
	DataCorrupted:            "XX001",
	WindowingError:           "42P20",
	InvalidWindowFrame:       "22013",
	InvalidNtileArgument:     "22014",
	InvalidNthArgument:       "22016",
	NullValueNotAllowed:      "22004",
	SubstringError:           "22011",
	InvalidEscapeSequence:    "22025",
	InvalidArgumentForLog:    "2201E",
	InvalidArgumentForPow:    "2201F",
	InvalidWidthBucket:       "2201G",
	InvalidRecursion:         "42P19",
	InvalidBinaryRep:         "22P03",
	CharacterNotInRepertoire: "22021",
	UntranslatableCharacter:  "22P05",
	ProtocolViolation:        "08P01",
	PrerequisiteState:        "55000",
	ArraySubscriptError:      "2202E",
	DataException:            "22000",
	InvalidRegex:             "2201B",
	InvalidSchemaName:        "3F000",
	BadCopyFileFormat:        "22P04",
	ReadOnlyTransaction:      "25006",
	InvalidCursorName:        "34000",
	DuplicateCursor:          "42P03",
	QueryCanceled:            "57014",
	InvalidAuthorization:     "28000",
	InvalidPassword:          "28P01",
	TooManyConnections:       "53300",
	DiskFull:                 "53100",
	CommitOutcomeUnknown:     "08007",
	OutOfMemory:              "53200",
	TempFileLimit:            "53400",
	IdleInTxnTimeout:         "25P03",
	DuplicateObject:          "42710",
	InvalidStatementName:     "26000",
	DuplicatePrepared:        "42P05",
	Internal:                 "XX000",
	InvalidEscapeCharUse:     "2200C",
	InsufficientPrivilege:    "42501",
	InvalidGrantOperation:    "0LP01",
	ObjectInUse:              "55006",
	InvalidFunctionDef:       "42P13",
	DuplicateFunction:        "42723",
	UndefinedParameter:       "42P02",
	InvalidTableDefinition:   "42P16",
	DuplicateSchema:          "42P06",
	ReservedName:             "42939",
	InvalidCatalogName:       "3D000",
}

func sqlstateOf(c Code) string {
	if s, ok := sqlstates[c]; ok {
		return s
	}
	return "XX000"
}
