package translate

// Test-only exports for the external test package translate_test (stream
// tests live there because package stream imports translate).
var (
	OAIGolden     = golden
	OAIDumpEvents = oaiDumpEvents
	OAIDumpJSON   = oaiDumpJSON
	OAIFixedNow   = oaiFixedNow
)
