"""Sphinx configuration: API reference (autodoc + numpydoc, docstrings validated), the mathematics,
the notebook (executed by myst-nb) and the figure scripts (sphinx-gallery, shown, not run).

    pip install ".[docs]" && sphinx-build -W --keep-going -b html docs docs/_build/html
"""

import indkernel

project = "indkernel"
author = "the indkernel developers"
copyright = "2026, the indkernel developers"
release = version = indkernel.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "gallery/*.ipynb", "gallery/*.py", "gallery/*.zip", "gallery/*.json"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
nb_execution_mode = "force"  # the notebook is stored without outputs; the build runs it
nb_execution_timeout = 300
nb_execution_raise_on_error = True

templates_path = ["_templates"]
autosummary_generate = True
# scikit-learn's generated metadata-routing setters and get/set_params are its API, documented there
# ignore-module-all: a subpackage's page shows its docstring, not again the objects it re-exports
autodoc_default_options = {"members": True, "ignore-module-all": True,
                           "exclude-members": "set_fit_request, set_predict_request, "
                           "set_score_request, get_metadata_routing, get_params, set_params"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Public docstrings are validated on every build (with -W a finding fails it): every public object
# has a docstring (GL08) with a one-line summary (SS01); no parameter documented that does not
# exist (PR02) or out of order (PR03); sections in numpydoc's order (GL07). (Summaries may start
# with code, ``K*(α)``, so SS02's capital letter is not asked for.)
numpydoc_validation_checks = {"GL08", "SS01", "PR02", "PR03", "GL07"}
numpydoc_validation_exclude = {
    r"\._[a-z]", r"\.__[a-z]+__$",  # private
    r"\.from_model$",  # overrides: the base class's docstring is shown
    r"^indkernel\.core\.proxy\.Oracle$",  # a type alias cannot carry a docstring; its #: comment is shown
    r"^indkernel\.reproduction\.protocol\.StratifiedKFold$",  # scikit-learn's class, imported (autosummary scans it)
    r"\.(ABC|abstractmethod)$",  # imported from abc by the machines and penalties
    # the machines' and penalties' implementations of their base class's methods (its docstring is shown)
    r"^indkernel\.core\.machines\.(Hinge|SquaredHinge|EpsilonInsensitive|OneClass)\.(u|u_adjoint|u_map|u_extent|linear|"
    r"linear_gradient|primal_terms|compiled_loss|libsvm_beta|from_dual_coef|start|model_spec)$",
    # the rules' implementations of TestRule's methods (its docstrings are shown)
    r"^indkernel\.estimators\.rules\.(Raw|Consistent|ConsistentFlip|ConsistentK0|Transductive)\.(coefficients|decide)$",
    r"\.tqdm$",  # tqdm's class, imported (indkernel._progress chooses which)
    r"^indkernel\.core\.penalties\.(Frobenius|Componentwise|Mercer)\.(kernel|oracle|model_spec)$",
    # the formulations' penalties implement their base class's methods (its docstrings are shown)
    r"^formulations\.penalties\.(Frobenius|Weighted|Componentwise|Mercer)\.(maxmin_term|kernel_term|weights)$",
}

sphinx_gallery_conf = {
    "examples_dirs": "../figures",
    "gallery_dirs": "gallery",
    "filename_pattern": r"^$",  # show the scripts; what they made is on the results page
    "download_all_examples": False,
    "plot_gallery": "False",
}

html_theme = "alabaster"
html_title = f"indkernel {release}"
