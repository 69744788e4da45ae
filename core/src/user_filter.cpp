#include "tandem/user_filter.hpp"

#include <memory>

#include "tandem/error.hpp"

namespace tandem {
namespace {

// What a registered point-wise filter keeps; shared by the filters it makes.
struct PointwiseKernel {
  std::string name;
  std::string function;
  std::function<std::vector<float>(const Params&)> args;
  std::function<Pixel(Pixel, std::span<const float>)> reference;

  std::vector<float> args_for(const Params& params) const {
    std::vector<float> p;
    if (args) {
      p = args(params);
    } else {
      for (double v : params.values()) p.push_back(static_cast<float>(v));
    }
    if (p.size() > 16) {
      throw Error(name + ": " + std::to_string(p.size()) +
                  " kernel arguments, but a point-wise stage takes at most 16 (one float16)");
    }
    return p;
  }
};

class UserPointwise final : public Filter {
 public:
  UserPointwise(std::shared_ptr<const PointwiseKernel> kernel, const Params& params)
      : kernel_(std::move(kernel)),
        stage_{kernel_->name + ".cl", kernel_->function, kernel_->args_for(params), {}} {}

  const PointwiseStage* pointwise() const override { return &stage_; }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const std::span<const float> p = stage_.args;
    const auto& pixel = kernel_->reference;
    for_each_pixel(*inputs[0], output, [&](Pixel px) { return pixel(px, p); });
  }

 private:
  std::shared_ptr<const PointwiseKernel> kernel_;
  PointwiseStage stage_;
};

}  // namespace

void register_filter(PointwiseFilterSpec spec) {
  const std::string what = spec.name.empty() ? "a point-wise filter" : spec.name;
  if (spec.name.empty() || spec.source.empty() || spec.function.empty() || !spec.reference) {
    throw Error(what + " needs a name, an OpenCL source, its function's name and a host reference");
  }
  if (FilterRegistry::instance().find(spec.name)) {
    throw Error("a filter named '" + spec.name + "' already exists");
  }
  auto kernel = std::make_shared<PointwiseKernel>(
      PointwiseKernel{spec.name, spec.function, std::move(spec.args), std::move(spec.reference)});
  kernel->args_for(
      Params(spec.params));  // refuse more than 16 arguments now, not at the first frame
  register_kernel_source(spec.name + ".cl", std::move(spec.source));
  register_filter(FilterSpec{
      .name = spec.name,
      .help = std::move(spec.help),
      .params = std::move(spec.params),
      .make = [kernel](const Params& p) { return std::make_unique<UserPointwise>(kernel, p); },
  });
}

void register_filter(FilterSpec spec) {
  FilterRegistry::instance().add(std::move(spec));
}

}  // namespace tandem
