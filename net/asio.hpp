// net/asio.hpp: the one header through which Boost.Asio, Boost.Beast and Asio's SSL layer are
// included (net/*.cpp and app/ only; never from a public header of another library).
//
// <utility> must come first: Boost 1.74's asio/awaitable.hpp uses std::exchange without
// including <utility>, which g++ 12's libstdc++ no longer pulls in transitively.
#pragma once

// clang-format off
#include <utility>

#include <boost/asio.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
// clang-format on

// g++ 12 reports a false -Wmismatched-new-delete when it inlines the destruction of an Asio
// coroutine frame (awaitable_frame_base has its own matching operator new/delete; GCC PR 109224).
// The pragma applies to the rest of every translation unit that includes this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
