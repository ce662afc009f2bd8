# Optional parts of the build, each an AUTO / ON / OFF cache string:
#   AUTO  build or use it when what it needs is found (the default)
#   ON    the same, but configuring fails when something is missing
#   OFF   never
# so that a user who installs only fixq's runtime dependencies (scripts/setup.sh --runtime)
# can configure and build the library, the CLI and the Python package, while
# scripts/setup.sh asks for everything with ON and CI cannot silently lose a part.

# fixq_tristate(OPTION OUT_VAR): OPTION's value as AUTO, ON or OFF (CMake's boolean words
# are accepted), else a configure error.
function(fixq_tristate option out_var)
  string(TOUPPER "${${option}}" v)
  if(v STREQUAL "AUTO")
    set(${out_var} AUTO PARENT_SCOPE)
  elseif(v MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(${out_var} ON PARENT_SCOPE)
  elseif(v MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(${out_var} OFF PARENT_SCOPE)
  else()
    message(FATAL_ERROR "${option}=${${option}}: expected AUTO, ON or OFF")
  endif()
endfunction()

# fixq_optional_missing(OPTION MODE WHY): a part that will not be built or used: an error
# when MODE is ON, a status line otherwise.
function(fixq_optional_missing option mode why)
  if(mode STREQUAL "ON")
    message(FATAL_ERROR "${option}=ON but ${why}")
  endif()
  message(STATUS "fixq: ${option}: off (${why})")
endfunction()
