// fmt's compiled part, built once into libqairt.
//
// With FMT_HEADER_ONLY every translation unit that includes <fmt/format.h>
// also compiled fmt's whole implementation (format-inl.h: the Dragonbox
// tables, the formatting engine): about half of each file's compile time.
// Debian ships fmt's compiled part only as a shared libfmt.so, which the
// library must not need at run time (it shares processes with Python and
// IDEs that may load another fmt). So the implementation is compiled here,
// once, and -fvisibility=hidden plus the version script keep its symbols
// inside libqairt. The instantiations below are the templates fmt's headers
// declare `extern` (or only declare) for char; wide strings are not used.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
