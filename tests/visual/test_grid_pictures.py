"""A sampling grid ([N, H, W, 2], [N, D, H, W, 3]) is pictured as its coordinate maps, not read
as an image with 16 channels and 2 columns."""

from __future__ import annotations

import numpy as np

import surgeon
from surgeon.validate.pictures import pictures

from .toy_patterns import ROOT


def test_a_2d_grid_gives_its_x_and_y_maps():
    rng = np.random.default_rng(0)
    grid = rng.uniform(-1, 1, (2, 16, 12, 2)).astype(np.float32)
    wrong = grid.copy()
    wrong[0, 3, 4, 1] += 0.5
    found = pictures("grid", grid, wrong)
    assert [p.note for p in found] == ["item 0, grid x coordinate (along W)", "item 0, grid y coordinate (along H)"]
    for c, p in enumerate(found):
        assert p.original.shape == (16, 12) and p.shape == [2, 16, 12, 2]
        np.testing.assert_array_equal(p.original, grid[0, :, :, c])
    assert found[0].difference.max() == 0 and found[1].difference[3, 4] == np.float32(0.5)


def test_a_3d_grid_gives_x_y_z_of_its_middle_slice():
    grid = np.random.default_rng(1).uniform(-1, 1, (1, 5, 6, 7, 3)).astype(np.float32)
    found = pictures("grid", grid, grid)
    assert [p.note for p in found] == [f"item 0, grid {a} coordinate (along {d}), depth slice 2 of 5"
                                       for a, d in zip("xyz", "WHD")]
    np.testing.assert_array_equal(found[2].original, grid[0, 2, :, :, 2])


def test_images_are_still_images():
    image = np.random.default_rng(2).random((1, 3, 8, 9)).astype(np.float32)
    (found,) = pictures("y", image, image)
    assert found.original.shape == (8, 9, 3) and "channels as RGB" in found.note


def test_the_page_draws_a_grid_as_a_grid():
    sample = str(ROOT / "samples" / "models" / "affine_ts_opset20_2d_static.onnx")
    result = surgeon.fuse(sample, target="affine-grid")  # the rewrite's output is the grid [1, 24, 20, 2]
    validation = surgeon.validate(sample, result.model, engine="reference")
    page = validation.to_html()
    assert page.count("/AffineGrid_output_0&#x27; [1,24,20,2] <small>item 0, grid ") == 2
    assert "grid x coordinate (along W)" in page and "grid y coordinate (along H)" in page
    assert "channel 0 of 24" not in page
