#pragma once

// The `serve:` line of the site policy file, read without a YAML parser.
//
// stepmap.so (stepmap_entry.cpp: libc only, no C++ runtime, no exceptions)
// decides from it whether to load the plugin proper for a step that does
// not use stepmap's options. site_file.cpp refuses every file in which this
// reading and yaml-cpp's disagree, so that what the entry decides is what
// the plugin proper reads. No allocation, no exceptions, no C++ library.

#include <stddef.h>

namespace stepmap::plugin {

// The largest site file read (here and by site_file.hpp): a policy is a
// few dozen lines.
inline constexpr size_t kMaxSitePolicyBytes = size_t{64} << 10;

enum ServeHint {
    kServeOptions, // no serve line, or `serve: options`
    kServePmix,    // `serve: pmix`
    kServeUnclear, // a serve line with another value, or a flow-style top level
};

namespace serve_line_detail {

inline bool isBlank(char c) {
    return c == ' ' || c == '\t';
}

// The value of the serve line [begin, end) after its colon: blanks, one
// level of quotes and a trailing "# comment" taken off.
inline ServeHint hintOfValue(const char *begin, const char *end) {
    while (begin < end && isBlank(*begin))
        ++begin;
    const char *valueEnd = end;
    if (begin < end && (*begin == '\'' || *begin == '"')) {
        const char quote = *begin++;
        const char *close = begin;
        while (close < end && *close != quote)
            ++close;
        if (close == end)
            return kServeUnclear;
        valueEnd = close;
        const char *rest = close + 1;
        while (rest < end && isBlank(*rest))
            ++rest;
        if (rest < end && *rest != '#')
            return kServeUnclear;
    } else {
        // YAML starts a comment at a '#' after a blank.
        for (const char *p = begin; p < end; ++p) {
            if (*p == '#' && p > begin && isBlank(p[-1])) {
                valueEnd = p;
                break;
            }
        }
        while (valueEnd > begin && isBlank(valueEnd[-1]))
            --valueEnd;
    }
    const size_t length = static_cast<size_t>(valueEnd - begin);
    const auto is = [&](const char *word, size_t wordLength) {
        if (length != wordLength)
            return false;
        for (size_t i = 0; i < length; ++i)
            if (begin[i] != word[i])
                return false;
        return true;
    };
    if (is("pmix", 4))
        return kServePmix;
    if (is("options", 7))
        return kServeOptions;
    return kServeUnclear;
}

} // namespace serve_line_detail

// What the first line deciding it says, and that line's number (from 1; 0
// when no line decides). A line decides when it begins with `serve`,
// optional blanks and `:` (then its value: `pmix`, `options`, anything else
// unclear), or with `{` (a flow-style top level: unclear). No deciding line:
// kServeOptions. A UTF-8 byte order mark at the start and a '\r' before
// each '\n' are ignored.
inline ServeHint serveHintAt(const char *text, size_t length, size_t *lineNumber) {
    namespace d = serve_line_detail;
    const char *p = text;
    const char *const end = text + length;
    if (length >= 3 && static_cast<unsigned char>(p[0]) == 0xef &&
        static_cast<unsigned char>(p[1]) == 0xbb && static_cast<unsigned char>(p[2]) == 0xbf)
        p += 3;
    for (size_t line = 1; p < end; ++line) {
        const char *lineEnd = p;
        while (lineEnd < end && *lineEnd != '\n')
            ++lineEnd;
        const char *next = lineEnd < end ? lineEnd + 1 : end;
        if (lineEnd > p && lineEnd[-1] == '\r')
            --lineEnd;
        ServeHint hint = kServeOptions;
        bool decides = false;
        if (p < lineEnd && *p == '{') {
            hint = kServeUnclear;
            decides = true;
        } else if (lineEnd - p >= 5 && p[0] == 's' && p[1] == 'e' && p[2] == 'r' && p[3] == 'v' &&
                   p[4] == 'e') {
            const char *colon = p + 5;
            while (colon < lineEnd && d::isBlank(*colon))
                ++colon;
            if (colon < lineEnd && *colon == ':') {
                hint = d::hintOfValue(colon + 1, lineEnd);
                decides = true;
            }
        }
        if (decides) {
            if (lineNumber)
                *lineNumber = line;
            return hint;
        }
        p = next;
    }
    if (lineNumber)
        *lineNumber = 0;
    return kServeOptions;
}

// The site file `text` (its `length` bytes, not NUL-terminated) as the
// entry reads it: see serveHintAt.
inline ServeHint serveHint(const char *text, size_t length) {
    return serveHintAt(text, length, nullptr);
}

} // namespace stepmap::plugin
