#pragma once

// A value or the reason the user's input could not produce one.
//
// C++20 has no std::expected. Errors a user can cause (a bad --host, too few
// slots, a malformed plan in the environment) travel as a UserError value
// whose message names the bad input and the fix; exceptions are not used for
// them. Reading value() of an error, or error() of a value, is a bug in the
// caller and aborts. Expected<void> is a step that yields nothing but may
// fail: `return {};` on success.

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace stepmap {

struct UserError {
    std::string message;

    bool operator==(const UserError &) const = default;
};

template <class T> class Expected {
public:
    Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    Expected(UserError error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() & { return *valuePointer(); }
    const T &value() const & { return *valuePointer(); }
    // By value, so that `const T &x = f().value();` cannot dangle.
    T value() && { return std::move(*valuePointer()); }

    const UserError &error() const {
        const UserError *error = std::get_if<1>(&state_);
        if (error == nullptr)
            std::abort(); // bug: error() of a value
        return *error;
    }

    T *operator->() { return valuePointer(); }
    const T *operator->() const { return valuePointer(); }
    T &operator*() & { return *valuePointer(); }
    const T &operator*() const & { return *valuePointer(); }

private:
    T *valuePointer() {
        T *value = std::get_if<0>(&state_);
        if (value == nullptr)
            std::abort(); // bug: value() of an error
        return value;
    }
    const T *valuePointer() const {
        const T *value = std::get_if<0>(&state_);
        if (value == nullptr)
            std::abort(); // bug: value() of an error
        return value;
    }

    std::variant<T, UserError> state_;
};

template <> class Expected<void> {
public:
    Expected() = default;
    Expected(UserError error) : error_(std::move(error)), failed_(true) {}

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }

    const UserError &error() const {
        if (!failed_)
            std::abort(); // bug: error() of a success
        return error_;
    }

private:
    UserError error_;
    bool failed_ = false;
};

} // namespace stepmap
