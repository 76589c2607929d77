package translate

// jsonSkipValue validates the value starting at data[i] (no leading
// whitespace) and returns the index after it, as jsonScanValue does, but
// without building its span. Most of what a validating pass walks is read
// by nobody (a stream event's ids, deltas and nulls); copying a span out
// of every one of them was the larger part of the pass. On an error the
// index is where jsonScanValue's would be.
func jsonSkipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		end, _, _, ok := jsonScanString(data, i+1)
		return end + 1, ok
	case '{', '[':
		return jsonSkipContainer(data, i)
	case 'n':
		return jsonScanLiteral(data, i, "null")
	case 't':
		return jsonScanLiteral(data, i, "true")
	case 'f':
		return jsonScanLiteral(data, i, "false")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return jsonScanNumber(data, i)
	}
	return i, false
}
