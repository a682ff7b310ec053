// lockstep-vitsgen: writes a VITS decoder-family model (or a prefix cut of it) as ONNX.
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/error.h"
#include "vits.h"

using namespace lockstep;

static vits::Part parse_part(const std::string& s) {
  if (s == "flow") return vits::Part::flow;
  if (s == "dec") return vits::Part::dec;
  if (s == "decoder") return vits::Part::decoder;
  throw Error("--part must be flow, dec or decoder, not '" + s + "'");
}

static int64_t parse_frames(const std::string& s) {
  if (s == "T") return -1;
  try {
    size_t used = 0;
    int64_t t = std::stoll(s, &used);
    if (used == s.size() && t > 0) return t;
  } catch (const std::exception&) {
  }
  throw Error("--T must be a positive number of frames or the symbol T, not '" + s + "'");
}

int main(int argc, char** argv) {
  CLI::App app{"Write a VITS decoder-family model (flow, HiFi-GAN dec, or both) as ONNX"};
  vits::Config c;
  std::string part = "flow", frames = "1024", out;
  std::vector<std::string> cuts;
  bool value_info = false;
  app.add_option("--part", part, "flow | dec | decoder (flow then dec)")->capture_default_str();
  app.add_option("--channels", c.flow.channels, "z channels")->capture_default_str();
  app.add_option("--hidden", c.flow.hidden, "WaveNet hidden channels")->capture_default_str();
  app.add_option("--kernel", c.flow.kernel, "WaveNet kernel size")->capture_default_str();
  app.add_option("--dilation-rate", c.flow.dilation_rate, "WaveNet dilation rate")->capture_default_str();
  app.add_option("--layers", c.flow.layers, "WaveNet layers per coupling layer")->capture_default_str();
  app.add_option("--flows", c.flow.flows, "coupling layers")->capture_default_str();
  app.add_option("--upsample-channels", c.dec.upsample_initial, "generator channels after conv_pre")->capture_default_str();
  app.add_option("--upsample-rates", c.dec.rates, "e.g. 8,8,2,2")->delimiter(',')->capture_default_str();
  app.add_option("--upsample-kernels", c.dec.kernels, "e.g. 16,16,4,4")->delimiter(',')->capture_default_str();
  app.add_option("--resblock-kernels", c.dec.resblock_kernels, "e.g. 3,7,11")->delimiter(',')->capture_default_str();
  app.add_option("--resblock-dilations", c.dec.resblock_dilations, "e.g. 1,3,5")->delimiter(',')->capture_default_str();
  app.add_option("--T", frames, "frames, or T for a symbolic time axis")->capture_default_str();
  app.add_option("--seed", c.seed, "weight seed")->capture_default_str();
  app.add_option("--cut", cuts, "keep only what computes this node's first output or this value (repeatable)");
  app.add_flag("--dynamo", c.dynamo, "IR 10 / opset 20 flavour of torch.onnx.export(dynamo=True)");
  app.add_flag("--constant-nodes", c.constant_nodes, "small constants as Constant nodes, as the TorchScript exporter writes them");
  app.add_flag("--value-info", value_info, "write value_info from shape inference (always with --dynamo)");
  app.add_option("-o,--output", out, "model file to write")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    c.part = parse_part(part);
    c.T = parse_frames(frames);
    Graph g = cuts.empty() ? vits::build(c) : vits::build_cut(c, cuts);
    ExportOptions opts = vits::export_options(c);
    opts.value_info = opts.value_info || value_info;
    save_onnx(g, out, opts);
    std::cout << out << ": " << g.nodes.size() << " nodes\n";
    return 0;
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
