// Private to the CLI: where the demos' models and texts are, and their PyTorch rows.
//
// Each demo model's files are in a folder of its own, data/<model>/ in the repository.
// The build copies the files a demo reads into <build>/share/fixq/<model>/ and
// `cmake --install` puts them in <prefix>/share/fixq/<model>/ (fixq_demo_data() in
// cmake/FixqDemoData.cmake), so the tool finds them next to itself either way: in
// <its own folder>/../share/fixq/<model>, with no path into the source tree.
//
// A demo's PyTorch rows come from the installed Python package: `python -m
// fixq.baselines <model> --data DIR --repeats N` prints one JSON document (python/fixq/
// baselines/). Where Python, the package or torch is missing, the rows are left out and
// the demo says why in one line.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fixq::cli {

// The folder of a demo model's files: `override` when not empty, else the installed one.
// Throws fixq::Error naming the folder looked for when it does not exist.
std::string demo_data_dir(const std::string& model, const std::string& override);

// The baseline's JSON document, or nullopt and `why` (one line) when there is none. The
// interpreter is $FIXQ_PYTHON, else the one fixq's Python package was built for; in a
// build tree, its <build>/python package is found first.
std::optional<nlohmann::json> torch_baseline(const std::string& model, const std::string& data_dir, int repeats,
                                             std::string* why);

}  // namespace fixq::cli
