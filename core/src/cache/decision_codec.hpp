// The decision codec: a DecisionRecord (tune/store.hpp) as the text every store keeps in its
// `decision` column, and as the JSON object `tune cache export` writes.
//
// The text is a compact JSON object with the record's fields by name; an absent record is the
// empty text. Reading is strict about types and counts (the column is stored data that damage
// may have altered, and an export is input from anywhere) and ignores members it does not
// know. That does not let a later libtune add fields to stored rows: the row checksum hashes
// the re-encoded record, so a field this version drops fails it. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tune/store.hpp"

namespace tune::cache {

// The stored text of `d`: empty for none.
std::string encode_decision(const std::optional<DecisionRecord>& d);

// Reads a stored text: none for the empty text; false (with `why` naming the field) when it
// is not an object of the record's fields of the right types.
bool decode_decision(std::string_view text, std::optional<DecisionRecord>* d, std::string* why);

}  // namespace tune::cache
