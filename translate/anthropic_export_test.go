package translate

// Test helpers shared with the external test package translate_test (the
// stream-level tests live there because package stream imports translate).
var (
	AnthGolden     = golden
	AnthFixture    = anthFixture
	AnthDumpEvents = anthDumpEvents
	AnthDumpJSON   = anthDumpJSON
	OwnID          = ownID
)
