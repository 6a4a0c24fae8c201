// SHIM (dropped when the templates/ move lands)
#pragma once
#include "rules/template.hpp"
namespace templates = rules;
