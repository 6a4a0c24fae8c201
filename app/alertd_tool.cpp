// alertd-tool: companion commands. Filled in by the template engine work (render).
#include <cstdio>
int main() {
  std::fputs("alertd-tool: no commands yet\n", stderr);
  return 2;
}
